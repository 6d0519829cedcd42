"""Builds the compiled core `_zepp` with the project's own CMake and packages it with python/zepp.

pip runs this (pyproject.toml): `pip install --no-build-isolation ./python`. The C++ stage
libraries and their Debian packages (scripts/install-deps.sh) are what CMake needs; nothing is
downloaded. The version is CMake's: project(VERSION) of the top-level CMakeLists.txt, the number
`zepp --version` prints, compiled into _zepp as _zepp.__version__ (zepp.__version__).

Environment:
  ZEPP_CMAKE_BUILD_DIR   CMake build folder to configure and build in (default: setuptools'
                         temporary one); a kept folder makes a reinstall incremental.
  CMAKE_CXX_COMPILER_LAUNCHER=ccache and the usual CMake variables are honoured.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def cmake_version():
    """VERSION of the top-level project() call, e.g. project(zepp VERSION 0.1.0 ...)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\s*\(\s*zepp\b[^)]*?\bVERSION\s+([0-9]+(?:\.[0-9]+)*)", text)
    if not match:
        sys.exit(f"setup.py: {ROOT / 'CMakeLists.txt'}: project(zepp VERSION x.y.z ...) not found")
    return match.group(1)


class CMakeBuild(build_ext):
    """Configure the project (no tests, benchmarks or CLI), build the target _zepp, copy it in."""

    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("ZEPP_CMAKE_BUILD_DIR") or pathlib.Path(self.build_temp) / "cmake")
        build.mkdir(parents=True, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                        "-DZEPP_BUILD_TESTS=OFF", "-DZEPP_BUILD_BENCH=OFF", "-DZEPP_BUILD_PYTHON=ON",
                        f"-DPython3_EXECUTABLE={sys.executable}"], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "_zepp", "-j", str(os.cpu_count() or 1)],
                       check=True)
        built = sorted((build / "python").glob("_zepp*.so"))
        if not built:
            sys.exit(f"setup.py: CMake built no _zepp*.so in {build / 'python'}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=cmake_version(),
    ext_modules=[Extension("_zepp", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
