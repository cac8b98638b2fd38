// Package egress is the sandboxes' one way out: an HTTP proxy in the
// gateway that they reach through HTTP_PROXY and HTTPS_PROXY.
//
// Each connection is identified by its source address (the sandbox
// backend maps a container's address to its session) and judged against
// that session's environment: a host not on its allowlist gets a 403. An
// allowed CONNECT is tunnelled as is, unless one of the environment's vault
// credentials is bound to the host: then the proxy terminates TLS with a
// certificate for the host issued by the deployment's own CA (which the
// sandbox trusts), strips the authentication headers the sandbox sent,
// injects the credential and forwards the request upstream with real TLS
// verification. Plain-HTTP requests are forwarded as is: a credential is
// never sent in clear text.
//
// Every decision is recorded once per CONNECT or request, without paths,
// queries or values, and identical decisions within a few seconds are
// folded into one. Upstream addresses are checked when dialled, after name
// resolution: loopback, private, link-local and other internal addresses
// are refused unless the operator allows them.
package egress
