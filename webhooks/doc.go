// Package webhooks owns switchboard's webhooks in both directions. Inbound
// (inbound.go), it gives the platform providers raw-body limits, HMAC
// verification and replay windows. Outbound, it delivers session events to
// registered destinations, signed with Standard Webhooks, at least once:
//
//   - destinations: per session or global (optionally per agent), each
//     with a level threshold, a type filter and a sealed secret; the
//     /v1/destinations, /v1/sessions/{id}/destinations and /v1/deliveries
//     handlers (Handler);
//   - the dispatcher (Service): the durable delivery queue lives in the session store (sessions/store),
//     filled by Append in the transaction that logs the events; the
//     dispatcher drains it with a bounded pool, one in-order stream per
//     destination and session, each claimed by one replica at a time
//     when several share the store, retrying with exponential backoff and full
//     jitter up to a horizon, then dead-lettering, and pausing a
//     destination that keeps failing;
//   - the SSRF guard (NewClient): connections to loopback, private,
//     link-local and other internal addresses are refused at connect time,
//     after DNS, and redirects are not followed.
package webhooks
