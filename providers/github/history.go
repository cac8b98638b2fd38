package github

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// DefaultHistoryLimit is how many earlier comments the first turn sees
// unless configured.
const DefaultHistoryLimit = 20

// historyTimeout bounds the reading of the earlier comments (a rate limit
// included): the first turn goes ahead without them rather than stall.
const historyTimeout = 20 * time.Second

// marker matches the hidden marker the sink puts in its own comments.
var marker = regexp.MustCompile(`\s*<!-- switchboard:[^>]*-->`)

// earlier is what was said on the issue or pull request before the
// mention that started the session, as one system user.message marked as
// the earlier conversation: its comments and, on a pull request, its
// review comments, merged in time order, the newest HistoryLimit kept.
// The trigger itself (and, for a review, the review's own comments, which
// its input holds) is left out, as is anything said after it. ok is false
// when there is nothing earlier, or GitHub does not answer in time.
func (p *Provider) earlier(ctx context.Context, s *core.Session, r ref) (e core.Event, ok bool) {
	limit := p.cfg.HistoryLimit
	if limit < 0 {
		return core.Event{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	c := p.client(r.Installation)
	all, err := issueComments(ctx, c, r.Owner, r.Repo, r.Number)
	if err == nil && r.PR {
		var review []commentOut
		review, err = reviewComments(ctx, c, r.Owner, r.Repo, r.Number)
		all = append(all, review...)
	}
	if err != nil {
		p.log.Warn("earlier comments unavailable; the first turn starts without them", "session_id", s.ID, "err", err)
		return core.Event{}, false
	}
	kept := before(all, r)
	if len(kept) == 0 {
		return core.Event{}, false
	}
	kind := "issue"
	if r.PR {
		kind = "pull request"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Earlier conversation on this %s, before you were mentioned (oldest first):\n", kind)
	if n := len(kept) - limit; n > 0 {
		fmt.Fprintf(&b, "(%d older comments are not shown; read them with the github tools if you need them)\n", n)
		kept = kept[n:]
	}
	for _, cm := range kept {
		who := "@" + cm.Author
		if strings.EqualFold(cm.Author, p.cfg.Slug+"[bot]") {
			who = "you"
		}
		where := ""
		if cm.Path != "" {
			where = fmt.Sprintf(" on %s line %d", cm.Path, cm.Line)
		}
		fmt.Fprintf(&b, "[%s] %s%s: %s\n", cm.CreatedAt, who, where, strings.TrimSpace(marker.ReplaceAllString(cm.Body, "")))
	}
	return core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: strings.TrimSuffix(b.String(), "\n")}), true
}

// before keeps the comments made before the trigger r, in time order:
// not the triggering comment, nor one made after it, nor a comment of the
// triggering review.
func before(all []commentOut, r ref) []commentOut {
	// Issue and review comments are numbered apart: a review comment has
	// a path. Within one kind ids grow with time, which tells apart
	// comments of the trigger's second.
	sameKind := func(cm commentOut) bool { return (cm.Path != "") == (r.Kind == kindReviewComment) }
	cutoff := ""
	for _, cm := range all {
		if r.CommentID != 0 && cm.ID == r.CommentID && sameKind(cm) {
			cutoff = cm.CreatedAt
		}
	}
	var out []commentOut
	for _, cm := range all {
		switch {
		case cutoff != "" && (cm.CreatedAt > cutoff || sameKind(cm) && cm.ID >= r.CommentID),
			r.ReviewID != 0 && cm.review == r.ReviewID:
			continue
		}
		out = append(out, cm)
	}
	// RFC 3339 in UTC sorts as text; the sort is stable, so comments of
	// one second keep the order GitHub listed them in.
	slices.SortStableFunc(out, func(a, b commentOut) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	return out
}
