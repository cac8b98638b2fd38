package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// maxReviewComments bounds the inline comments read of one review.
const maxReviewComments = 300

// wholeReview is the text of the review d belongs to: its summary and
// every inline comment, whichever of the review's deliveries came first.
// A review and its comments arrive as separate deliveries that make one
// turn (the review is their dedupe key), so the first to arrive must
// carry them all: the others are not stored. ok is false when GitHub
// could not be asked; the delivery's own text then stands.
func (p *Provider) wholeReview(ctx context.Context, d decision) (string, bool) {
	r := d.ref
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c := p.client(r.Installation)
	rv, _, err := c.PullRequests.GetReview(ctx, r.Owner, r.Repo, r.Number, r.ReviewID)
	if err != nil {
		p.log.Warn("read the review of a trigger; its other comments are not given", "key", d.key, "review_id", r.ReviewID, "err", err)
		return "", false
	}
	var comments []*gh.PullRequestComment
	opts := &gh.ListOptions{PerPage: 100}
	for len(comments) < maxReviewComments {
		page, resp, err := c.PullRequests.ListReviewComments(ctx, r.Owner, r.Repo, r.Number, r.ReviewID, opts)
		if err != nil {
			p.log.Warn("read the comments of a trigger's review; they are not given", "key", d.key, "review_id", r.ReviewID, "err", err)
			return "", false
		}
		comments = append(comments, page...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return reviewText(rv, comments), true
}

// reviewText is a review as the model reads it.
func reviewText(rv *gh.PullRequestReview, comments []*gh.PullRequestComment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%s reviewed (%s)", rv.GetUser().GetLogin(), strings.ToLower(strings.ReplaceAll(rv.GetState(), "_", " ")))
	if body := strings.TrimSpace(rv.GetBody()); body != "" {
		b.WriteString(":\n" + body)
	}
	if len(comments) > 0 {
		fmt.Fprintf(&b, "\n\nInline comments of the review (%d):", len(comments))
	}
	for _, c := range comments {
		line := c.GetLine()
		if line == 0 {
			line = c.GetOriginalLine()
		}
		fmt.Fprintf(&b, "\n\n%s line %d (comment %d):\n%s", c.GetPath(), line, c.GetID(), c.GetBody())
		if h := c.GetDiffHunk(); h != "" {
			fmt.Fprintf(&b, "\n```diff\n%s\n```", h)
		}
	}
	return b.String()
}
