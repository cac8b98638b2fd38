package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
)

// memberEntry is a user's access level on a project, as read at a time.
type memberEntry struct {
	level gl.AccessLevelValue
	until int64 // unix nanoseconds
}

// mayAct tells whether a user may trigger the agent and answer its
// questions on a project: a member with Developer access or above,
// inherited memberships included (members/all). Anyone may comment on a
// public project, so being able to comment proves nothing. An answer is
// trusted for MemberTTL.
func (p *Provider) mayAct(ctx context.Context, in *core.Installation, projectID, userID int64) (bool, error) {
	k := strconv.FormatInt(projectID, 10) + "/" + strconv.FormatInt(userID, 10)
	now := p.cfg.Now()
	p.mu.Lock()
	e, ok := p.members[k]
	p.mu.Unlock()
	if ok && now.UnixNano() < e.until {
		return e.level >= gl.DeveloperPermissions, nil
	}
	c, err := p.apiClient(ctx, in)
	if err != nil {
		return false, err
	}
	level := gl.NoPermissions
	m, resp, err := c.ProjectMembers.GetInheritedProjectMember(projectID, userID, gl.WithContext(ctx))
	switch {
	case resp != nil && resp.StatusCode == http.StatusNotFound:
		// Not a member: a guest of a public project, or no one.
	case err != nil:
		return false, fmt.Errorf("gitlab: access level of user %d on project %d: %w", userID, projectID, err)
	default:
		level = m.AccessLevel
	}
	p.mu.Lock()
	p.members[k] = memberEntry{level: level, until: now.Add(p.cfg.MemberTTL).UnixNano()}
	p.mu.Unlock()
	return level >= gl.DeveloperPermissions, nil
}
