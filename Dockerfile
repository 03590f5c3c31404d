# punctual in a container, for sharded runs on Kubernetes (deploy/kubernetes/README.md).
#   docker build -t punctual:0.1.0 .
# The runtime stage installs exactly the shared libraries the binary links against:
# tests/integration/test_image_deps.py checks its apt-get list against `ldd` of a build.

FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev libssl-dev libyaml-cpp-dev \
      libnghttp2-dev libprotobuf-dev protobuf-compiler libsnappy-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The test suite needs GTest and more; the image needs only the binary.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPUNCTUAL_TESTS=OFF \
 && cmake --build /build --target punctual

FROM debian:12-slim AS runtime
# ca-certificates: https:// targets are verified against the system store.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libc6 libgcc-s1 libstdc++6 zlib1g libssl3 libfmt9 libyaml-cpp0.7 libnghttp2-14 \
      libprotobuf32 libsnappy1v5 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/punctual /usr/local/bin/punctual
ENTRYPOINT ["punctual"]
