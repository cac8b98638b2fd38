package core

// Repository is a git repository a session works on, which the gateway
// clones into the session's sandbox before its first turn (through the
// egress proxy, as the model's own clones go) so that the repository's
// instructions and skills reach the model.
type Repository struct {
	// FullName is owner/name, as people call it.
	FullName string
	// CloneURL is the HTTPS URL git clones from.
	CloneURL string
	// Branch is the branch whose instructions count: the default branch
	// for an issue, the base branch for a pull request (a fork's head
	// cannot bring its own instructions). Empty: the default branch.
	Branch string
	// Dir is the folder in the workspace (SandboxWorkspace/<name>).
	Dir string
}
