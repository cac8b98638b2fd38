// Package core holds switchboard's domain types (agents and their versions,
// sessions, events), the small contracts other packages meet (the session
// store, models, tools) and the sentinel errors shared across packages.
//
// core imports nothing of switchboard's outside core/.
package core
