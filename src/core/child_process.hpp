// Forked workers (the sim executor's child, the sweeps' jobs) must not outlive the program: a
// sweep killed with SIGTERM left its worker running as an orphan, still growing (found by a
// fresh-user review).
#pragma once
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace zepp {

// Call first thing in a child forked from `parent` (its getpid() before fork): the kernel sends
// the child SIGKILL when the parent exits, and a parent already gone (the race before prctl)
// ends the child at once.
inline void die_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
}

}  // namespace zepp
