# Multi-stage build: a static, CGO-free binary on an empty image, run as a non-root user.
# Only the CA bundle (for HTTPS targets and Slack/GitHub APIs) and zone data come along.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/gateway ./cmd/gateway \
 && mkdir -p /out/data /out/tmp && chmod 1777 /out/tmp

FROM scratch
WORKDIR /app
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /usr/share/zoneinfo /usr/share/zoneinfo
COPY --from=build /out/tmp /tmp
COPY --from=build /out/gateway /usr/local/bin/gateway
COPY --from=build --chown=65532:65532 /out/data /app/data
COPY config.yaml /app/config.yaml
# Inside a container the gateway must listen on all interfaces. The shipped config's
# dev-only- tokens are then refused (exit 2, naming the key): give the image real tokens
# with -e SIGNALGATE_ADMIN_TOKEN=… -e CODER_AGENT_TOKEN=…, or mount your own config.yaml.
# PostgreSQL: -e SIGNALGATE_STORAGE_DRIVER=postgres -e SIGNALGATE_DSN=postgres://… (docs/deployment.md).
ENV SIGNALGATE_LISTEN=0.0.0.0:8080
EXPOSE 8080
# Healthy once the database is reachable and migrated (GET /readyz). The image has no
# shell nor curl: the binary asks, on the port SIGNALGATE_LISTEN names.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/usr/local/bin/gateway", "health"]
VOLUME ["/app/data"]
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gateway"]
CMD ["serve", "--config", "/app/config.yaml"]
