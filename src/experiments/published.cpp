// Numbers from papers/zepp.txt §6.2 (Figure 9) and §6.3 (Figure 10), quoted where they appear.
#include "experiments/published.hpp"

namespace zepp::experiments {

const std::vector<PublishedPoint>& published_points() {
  static const std::vector<PublishedPoint> points = {
      {"fig9", "Qwen", "a100", 4, 1, "a2av", 2.99, "§6.2: at four nodes, 1 to 16 MB raises our speedup over A2AV+GEMM from 2.99x to 4.31x for Qwen"},
      {"fig9", "Qwen", "a100", 4, 16, "a2av", 4.31, "§6.2: ... from 2.99x to 4.31x for Qwen"},
      {"fig9", "K2", "a100", 4, 1, "a2av", 2.10, "§6.2: ... and from 2.10x to 3.43x for K2"},
      {"fig9", "K2", "a100", 4, 16, "a2av", 3.43, "§6.2: ... and from 2.10x to 3.43x for K2"},
      {"fig9", "Qwen", "a100", 16, 1, "a2av", 6.68, "§6.2: at 1 MB, Zepp achieves 6.68x and 5.77x over A2AV+GEMM for Qwen and K2 (16 nodes)"},
      {"fig9", "K2", "a100", 16, 1, "a2av", 5.77, "§6.2: at 1 MB, 6.68x and 5.77x over A2AV+GEMM (16 nodes)"},
      {"fig9", "Qwen", "a100", 16, 16, "a2av", 4.66, "§6.2: at 16 MB, Zepp achieves 4.66x and 3.28x speedups (16 nodes)"},
      {"fig9", "K2", "a100", 16, 16, "a2av", 3.28, "§6.2: at 16 MB, 4.66x and 3.28x (16 nodes)"},
      {"fig9", "Qwen", "a100", 4, 16, "comet+eplb", 1.34, "§6.2: at 16 MB, over COMET+EPLB from 1.34x to 3.53x for Qwen between four and sixteen nodes"},
      {"fig9", "Qwen", "a100", 16, 16, "comet+eplb", 3.53, "§6.2: ... 1.34x to 3.53x for Qwen"},
      {"fig9", "K2", "a100", 4, 16, "comet+eplb", 1.23, "§6.2: ... and from 1.23x to 2.94x for K2"},
      {"fig9", "K2", "a100", 16, 16, "comet+eplb", 2.94, "§6.2: ... 1.23x to 2.94x for K2"},
      {"fig9", "Qwen", "a100", 4, 1, "comet+eplb", 2.18, "§6.2: at four nodes and 1 MB, Zepp outperforms COMET+EPLB by 2.18x for Qwen"},
      {"fig9", "K2", "a100", 4, 1, "comet+eplb", 1.44, "§6.2: ... and 1.44x for K2"},
      {"fig10", "K2", "a100", 2, 1, "a2av", 1.53, "§6.3: at two nodes on A100, 2.93x at 64 MB compared with 1.53x at 1 MB"},
      {"fig10", "K2", "a100", 2, 64, "a2av", 2.93, "§6.3: at two nodes on A100, 2.93x at 64 MB"},
      {"fig10", "K2", "h100", 2, 1, "a2av", 1.23, "§6.3: H100 ... 4.13x at 64 MB compared with 1.23x at 1 MB"},
      {"fig10", "K2", "h100", 2, 64, "a2av", 4.13, "§6.3: H100 ... 4.13x at 64 MB"},
      {"fig10", "K2", "a100", 32, 1, "a2av", 9.49, "§6.3: at 1 MB, speedup reaches 9.49x on A100 and 15.10x on H100 at thirty-two nodes"},
      {"fig10", "K2", "h100", 32, 1, "a2av", 15.10, "§6.3: ... 15.10x on H100 at thirty-two nodes"},
  };
  return points;
}

const std::vector<PublishedAggregate>& published_aggregates() {
  static const std::vector<PublishedAggregate> aggregates = {
      {"fig9", "speedup over a2av, all configurations (Qwen, K2)",
       "§6.2: Zepp achieves 2.10-6.68x speedup over A2AV+GEMM", 2.10, 6.68},
      {"fig9", "highest speedup over the fastest other strategy", "§6.2: up to 2.78x over the fastest competing baseline",
       2.78, 2.78},
      {"fig9", "geometric mean speedup over the fastest other strategy",
       "§6.2: a geometric mean speedup of 1.86x over the fastest competing baseline in each configuration", 1.86, 1.86},
      {"fig10", "speedup over a2av at 64 MB across node counts, A100",
       "§6.3: at 64 MB, speedup stays within 2.35-2.93x on A100", 2.35, 2.93},
      {"fig10", "speedup over a2av at 64 MB across node counts, H100", "§6.3: ... and 2.46-4.13x on H100", 2.46, 4.13},
  };
  return aggregates;
}

}  // namespace zepp::experiments
