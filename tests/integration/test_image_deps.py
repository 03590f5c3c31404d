"""The container image's runtime stage installs exactly what the binary needs.

Usage: python3 test_image_deps.py PATH_TO_PUNCTUAL

The image cannot be built here (no registry), so its runtime dependencies are
checked against the binary instead: `ldd` lists the shared libraries it loads,
`dpkg -S` names the Debian package of each, and every such package must be in
the `apt-get install` of the Dockerfile's last stage; every other package there
must be one this file knows a reason for (NON_LIBRARY). Negative controls run
the same check on altered copies of the Dockerfile and must report the change.
"""

import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCKERFILE = os.path.join(ROOT, "Dockerfile")
INSTALL_DEPS = os.path.join(ROOT, "scripts", "install-deps.sh")
# Runtime packages no `ldd` finds, and why the image needs them.
NON_LIBRARY = {"ca-certificates": "https:// targets are verified against the system store"}
# Build packages no `ldd` can see (a compiler, headers-only use), and why the build stage needs
# them: CMakeLists.txt's find_package and find_library fail without them.
BUILD_ONLY = {"protobuf-compiler": "protoc generates the remote-write messages (src/metrics/proto)",
              "libprotobuf-dev": "the protobuf headers and library the messages compile against",
              "libsnappy-dev": "snappy.h and the library that compresses remote-write bodies"}
# Sanitizer runtimes: an ASan or TSan build links them, the image's Release build does not.
SANITIZER_LIBRARY = re.compile(r"^lib(asan|ubsan|tsan|lsan)\.so")


def stages(dockerfile_text):
    """[(FROM line, [instruction, ...])], continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", dockerfile_text)
    result = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            result.append((line, []))
        elif result:
            result[-1][1].append(line)
    return result


def apt_installed(instructions):
    """The packages every `apt-get install` of these RUN instructions names."""
    packages = []
    for instruction in instructions:
        if not instruction.upper().startswith("RUN "):
            continue
        for command in re.split(r"&&|;|\|\|", instruction[4:]):
            words = shlex.split(command)
            if len(words) >= 2 and words[0] == "apt-get" and "install" in words:
                after = words[words.index("install") + 1:]
                packages += [w for w in after if not w.startswith("-")]
    return packages


def runtime_packages(dockerfile_text):
    all_stages = stages(dockerfile_text)
    check(len(all_stages) >= 2, f"expected a multi-stage Dockerfile, found {len(all_stages)} stage(s)")
    return apt_installed(all_stages[-1][1])


def package_of(path):
    """The Debian package that ships `path`, trying the /lib and /usr/lib spellings (usrmerge)."""
    candidates = [path, os.path.realpath(path)]
    for p in list(candidates):
        if p.startswith("/usr/lib/"):
            candidates.append(p[len("/usr"):])
        elif p.startswith("/lib"):
            candidates.append("/usr" + p)
    for p in candidates:
        proc = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True, timeout=30)
        if proc.returncode == 0:
            package = proc.stdout.split(":", 1)[0].strip()
            return package.split(":")[0]  # libssl3:amd64 -> libssl3
    raise AssertionError(f"dpkg -S knows no package for {path} (tried {candidates})")


def needed_packages(binary):
    """{package: [library, ...]} for every library `ldd` resolves, sanitizer runtimes aside."""
    proc = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30)
    check_eq(proc.returncode, 0, f"ldd {binary} exit code (stderr {proc.stderr!r})")
    needed = {}
    for line in proc.stdout.splitlines():
        check("not found" not in line, f"ldd cannot resolve a library: {line.strip()}")
        m = re.match(r"\s*(\S+)\s+=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)\s+\(", line)
        if not m:
            continue  # linux-vdso.so.1 has no file
        path = m.group(m.lastindex)
        if SANITIZER_LIBRARY.match(os.path.basename(path)):
            print(f"note: {os.path.basename(path)} is a sanitizer runtime, not in a Release image")
            continue
        needed.setdefault(package_of(path), []).append(os.path.basename(path))
    check(needed, f"ldd named no library of {binary}: {proc.stdout!r}")
    return needed


def problems(dockerfile_text, needed):
    """What is wrong with this Dockerfile's runtime stage, as sentences (none: it is right)."""
    installed = runtime_packages(dockerfile_text)
    out = [f"missing {p} (for {', '.join(needed[p])})" for p in sorted(needed) if p not in installed]
    out += [f"unneeded {p}" for p in installed if p not in needed and p not in NON_LIBRARY]
    return out


def check_runtime_stage(text, needed):
    check(problems(text, needed) == [],
          f"Dockerfile runtime stage: {'; '.join(problems(text, needed))}")
    all_stages = stages(text)
    check(all_stages[-1][0].split()[1] == "debian:12-slim", f"runtime base: {all_stages[-1][0]}")
    runs = " ".join(i for i in all_stages[-1][1] if i.startswith("RUN "))
    check("--no-install-recommends" in runs, "the runtime apt-get install must skip recommends")
    check(any(re.match(r"COPY --from=\S+ \S+ /usr/local/bin/punctual$", i) for i in all_stages[-1][1]),
          "the runtime stage must copy the binary to /usr/local/bin/punctual")
    check('ENTRYPOINT ["punctual"]' in all_stages[-1][1], "ENTRYPOINT [\"punctual\"] missing")


def check_build_stage(text):
    """The build stage installs packages install-deps.sh knows (so the names are real ones)."""
    with open(INSTALL_DEPS, encoding="utf-8") as f:
        m = re.search(r"pkgs=\((.*?)\)", f.read(), re.S)
    known = set(m.group(1).split())
    first = stages(text)[0]
    check(first[0].split()[1] == "debian:12", f"build base: {first[0]}")
    build = apt_installed(first[1])
    check(build, "the build stage installs nothing")
    unknown = [p for p in build if p not in known]
    check(not unknown, f"build-stage packages not in scripts/install-deps.sh: {unknown}")
    missing = [f"{p} ({why})" for p, why in BUILD_ONLY.items() if p not in build]
    check(not missing, f"the build stage lacks {'; '.join(missing)}")


def negative_build_only(text):
    """A copy whose build stage lacks protoc must fail the build-stage check."""
    altered = re.sub(r"(?<=\s)protobuf-compiler(?=\s)", " ", text, count=1)
    check(altered != text, "could not remove protobuf-compiler from the Dockerfile text")
    try:
        check_build_stage(altered)
    except AssertionError as e:
        check("protobuf-compiler" in str(e), f"the wrong complaint without protoc: {e}")
        return
    raise AssertionError("a build stage without protobuf-compiler passed the check")


def negative_missing(text, needed):
    """A copy without one needed package must report exactly that package missing."""
    victim = "libssl3" if "libssl3" in needed else sorted(needed)[0]
    altered = re.sub(rf"(?<=\s){re.escape(victim)}(?=\s)", " ", text)
    check(altered != text, f"could not remove {victim} from the Dockerfile text")
    found = problems(altered, needed)
    check(found == [f"missing {victim} (for {', '.join(needed[victim])})"],
          f"without {victim}: expected it reported missing, got {found}")


def negative_extra(text, needed):
    """A copy that installs a library the binary does not load must report it."""
    altered = re.sub(r"(?<=\s)ca-certificates(?=\s)", "ca-certificates libcurl4", text, count=1)
    check(altered != text, "could not add a package to the Dockerfile text")
    check(problems(altered, needed) == ["unneeded libcurl4"],
          f"with libcurl4: got {problems(altered, needed)}")


def main():
    binary = harness.binary_from_argv()
    with open(DOCKERFILE, encoding="utf-8") as f:
        text = f.read()
    checks = harness.Checks("image dependencies")
    needed = {}
    checks.run("ldd and dpkg -S name the binary's packages", lambda: needed.update(needed_packages(binary)))
    for package, libraries in sorted(needed.items()):
        print(f"needed: {package} ({', '.join(libraries)})")
    checks.run("runtime stage installs exactly them (and ca-certificates)", check_runtime_stage, text, needed)
    checks.run("build stage installs known build packages", check_build_stage, text)
    checks.run("negative control: a needed package removed is reported", negative_missing, text, needed)
    checks.run("negative control: an unneeded package added is reported", negative_extra, text, needed)
    checks.run("negative control: a build stage without protoc is reported", negative_build_only, text)
    checks.finish()


if __name__ == "__main__":
    main()
