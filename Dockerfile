# The gateway's image, built by scripts/docker-image from a context it
# stages (the static binary, Debian's CA bundle, an empty data directory
# and /tmp): no base image, so nothing is pulled from a registry.
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --chown=65532:65532 data /data
COPY tmp /tmp
COPY switchboard /usr/local/bin/switchboard
# Listen on every interface of the container; keep the store, the keys
# and the admin token in the volume. The sandbox is on only when a Docker
# socket is mounted (SWITCHBOARD_SANDBOX=docker then finds the engine);
# its egress proxy needs root, so it stays off in this image.
ENV SWITCHBOARD_ADDR=0.0.0.0:8080 SWITCHBOARD_DATA_DIR=/data HOME=/data
USER 65532:65532
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/switchboard"]
CMD ["serve"]
