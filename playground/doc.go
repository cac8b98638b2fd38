// Package playground is switchboard dev: the gateway on loopback with a
// data directory of its own, wired by real signed webhooks to simulated
// Slack, GitHub, GitLab and Linear (the project's fakes), and a page
// where a person writes in a Slack channel, comments on a pull request or
// a merge request, or delegates a Linear issue, and sees what the agent
// posts back, as each platform would show it. Without a model it runs a
// scripted demo model, labelled as such wherever it speaks.
package playground
