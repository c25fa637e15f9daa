"""Builds skinnygemm_torch: the PyTorch ops over skinnygemm (docs/torch.md).

Run from this folder (python/):

    python setup.py build --build-lib BUILD/pylib --build-temp BUILD/tmp   # what run_tests.sh does
    pip install --no-build-isolation .                                      # or install it

The skinnygemm library comes from SKINNYGEMM_PREFIX (an installed prefix: include/ and lib/) when that is set,
else it is configured, built and installed from this source tree with CMake into SKINNYGEMM_TORCH_BUILD
(default python/build/skinnygemm), with the C++ ABI flag of the torch found here and SKINNYGEMM_CUDA
(AUTO/ON/OFF; default AUTO with a CUDA torch, OFF with a CPU-only one) passed through. Nothing is downloaded. The ops get a CUDA kernel when torch was built
with CUDA and a CUDA toolkit is found (CUDA_HOME); otherwise CPU and Meta only. Without torch this prints a
message and does nothing.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

try:
    import torch
    from torch.utils import cpp_extension
except ImportError as e:  # the build is optional: say so and stop
    print(f"skinnygemm_torch: SKIPPED: torch not importable by {sys.executable} ({e}); nothing built")
    sys.exit(0)


def run(cmd):
    print("skinnygemm_torch: " + " ".join(cmd), flush=True)
    subprocess.check_call(cmd)


def torch_compatible_cxx():
    """The C++ compiler for the library and the extension: SKINNYGEMM_TORCH_CXX, else the system's c++.

    torch links libstdc++ dynamically, and so must everything loaded next to it. A toolchain that links
    libstdc++ statically (the GPU machine's CXX=/opt/gcc/bin/g++ does: the built libskinnygemm.so then exports
    std:: symbols and needs no libstdc++.so) made the first op call segfault under torch 2.11 (2026-11-29)."""
    for cxx in (os.environ.get("SKINNYGEMM_TORCH_CXX"), "/usr/bin/c++", os.environ.get("CXX"), shutil.which("c++")):
        if cxx and os.path.exists(cxx):
            return cxx
    return None


def torch_libstdcxx():
    """The libstdc++ this interpreter loaded with torch: the one every library next to torch must bind to.

    On the GPU machine (2026-11-29) even the system g++-13 produced a CUDA-enabled libskinnygemm.so without a
    libstdc++.so dependency (its std:: symbols came from a static copy), while a CPU-only build was fine. Naming
    torch's own libstdc++.so.6 on the link line, before the objects, binds the std:: symbols to it."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libstdc++.so") and os.path.exists(path):
                    return path
    except OSError:
        pass
    return None


LIBSTDCXX = torch_libstdcxx()
LINK_LIBSTDCXX = f"-Wl,--no-as-needed {LIBSTDCXX} -Wl,--as-needed" if LIBSTDCXX else ""
CXX = torch_compatible_cxx()
if CXX:
    os.environ["CXX"] = CXX  # torch.utils.cpp_extension compiles and links the extension with $CXX


def library_prefix():
    """The skinnygemm install prefix to compile and link against (built here when not given)."""
    prefix = os.environ.get("SKINNYGEMM_PREFIX")
    if prefix:
        return os.path.abspath(prefix)
    build = os.path.abspath(os.environ.get("SKINNYGEMM_TORCH_BUILD", os.path.join(HERE, "build", "skinnygemm")))
    prefix = os.path.join(build, "prefix")
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    # A CPU-only torch cannot hand the library CUDA tensors: skip the (long) CUDA build unless asked for.
    cuda_mode = os.environ.get("SKINNYGEMM_CUDA", "AUTO" if torch.version.cuda else "OFF")
    configure = ["cmake", "-S", REPO, "-B", os.path.join(build, "cmake"), "-DCMAKE_BUILD_TYPE=Release",
                 "-DSKINNYGEMM_TESTS=OFF", "-DSKINNYGEMM_WERROR=OFF", f"-DSKINNYGEMM_CUDA={cuda_mode}",
                 # no NCCL: the ops never run the multi-GPU step, and torch loads its own libnccl.so.2
                 "-DSKINNYGEMM_NCCL=OFF",
                 f"-DCMAKE_CXX_FLAGS=-D_GLIBCXX_USE_CXX11_ABI={abi}", f"-DCMAKE_INSTALL_PREFIX={prefix}",
                 "-DCMAKE_INSTALL_LIBDIR=lib"]
    if CXX:  # the host side of the .cu files too: nvcc otherwise takes $CXX (measured: /opt/gcc, still crashing)
        configure += [f"-DCMAKE_CXX_COMPILER={CXX}", f"-DCMAKE_CUDA_HOST_COMPILER={CXX}"]
    # CMake seeds the link flags from $LDFLAGS on a first configure; a -static-libstdc++ there would undo the
    # compiler choice above (the CUDA build still lacked libstdc++.so on the GPU machine, 2026-11-29).
    configure += [f"-DCMAKE_SHARED_LINKER_FLAGS={LINK_LIBSTDCXX}", f"-DCMAKE_EXE_LINKER_FLAGS={LINK_LIBSTDCXX}",
                  "-DCMAKE_MODULE_LINKER_FLAGS="]
    try:
        import ninja  # noqa: F401  (only to prefer the Ninja generator when it is there)
        configure += ["-G", "Ninja"]
    except ImportError:
        pass
    run(configure)
    run(["cmake", "--build", os.path.join(build, "cmake"), "--parallel", str(os.cpu_count() or 2)])
    run(["cmake", "--install", os.path.join(build, "cmake")])
    return prefix


def library_dir(prefix):
    for sub in ("lib", "lib64"):
        if glob.glob(os.path.join(prefix, sub, "libskinnygemm.so*")):
            return os.path.join(prefix, sub)
    raise SystemExit(f"skinnygemm_torch: no libskinnygemm.so under {prefix}/lib or {prefix}/lib64")


# setup.py also runs for `--help`, `clean` and the like: build the library only for commands that compile.
BUILDS = {"build", "build_ext", "install", "bdist_wheel", "develop", "bdist_egg", "editable_wheel"}
if any(a in BUILDS for a in sys.argv[1:]):
    prefix = library_prefix()
    libdir = library_dir(prefix)
else:
    prefix, libdir = os.path.join(HERE, "build", "skinnygemm", "prefix"), os.path.join(HERE, "build", "lib")

# A library built without CUDA (SKINNYGEMM_CUDA=OFF, as ctest's CPU job builds it) gets no CUDA kernels in the
# extension either: CUDA tensors then fail in torch's dispatcher with a clear "no CUDA kernel" error.
with_cuda = (torch.version.cuda is not None and cpp_extension.CUDA_HOME is not None
             and os.environ.get("SKINNYGEMM_CUDA", "AUTO").upper() != "OFF")
Extension = cpp_extension.CUDAExtension if with_cuda else cpp_extension.CppExtension
print(f"skinnygemm_torch: torch {torch.__version__} (CUDA {torch.version.cuda}), "
      f"CUDA kernels {'ON' if with_cuda else 'OFF'}, skinnygemm from {prefix}", flush=True)

# skinnygemm's headers need C++17; torch 2.x's BuildExtension picks its own standard (17 or newer), 1.13's
# would pick C++14.
# (-Wno-deprecated-declarations: torch 1.13's headers use std::iterator, deprecated in C++17.)
cxx_flags = ["-O2"] + (["-std=c++17", "-Wno-deprecated-declarations"]
                       if int(torch.__version__.split(".")[0]) < 2 else [])

ext = Extension(
    name="skinnygemm_torch._C",
    sources=["skinnygemm_torch/csrc/ops.cpp"],
    include_dirs=[os.path.join(prefix, "include")],
    library_dirs=[libdir],
    libraries=["skinnygemm"],
    define_macros=[("SKINNYGEMM_TORCH_CUDA", "1")] if with_cuda else [],
    extra_compile_args={"cxx": cxx_flags, "nvcc": ["-O2"]} if with_cuda else cxx_flags,
    extra_link_args=[f"-Wl,-rpath,{libdir}"] + LINK_LIBSTDCXX.split(),
)

setup(
    name="skinnygemm_torch",
    version="0.2.0",
    description="PyTorch ops and modules over skinnygemm",
    packages=["skinnygemm_torch"],
    ext_modules=[ext],
    cmdclass={"build_ext": cpp_extension.BuildExtension},
)
