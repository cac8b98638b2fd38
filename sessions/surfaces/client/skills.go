package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// CreateSkill uploads a skill folder as version 1 of a new skill. body is
// a zip, a tar, a gzipped tar or JSON {"files": {...}}, and contentType
// says which (application/zip, application/x-tar, application/gzip,
// application/json).
func (c *Client) CreateSkill(ctx context.Context, contentType string, body []byte) (*core.Skill, error) {
	var s core.Skill
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/skills", raw: body, rawType: contentType}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// UpdateSkill uploads a skill folder as the next version of the skill
// with this id (or name); body as in CreateSkill.
func (c *Client) UpdateSkill(ctx context.Context, id, contentType string, body []byte) (*core.Skill, error) {
	var s core.Skill
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/skills/%s/versions", id), raw: body, rawType: contentType}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSkills returns one page of skills (their latest versions).
func (c *Client) ListSkills(ctx context.Context, p ListParams) (*web.Page[core.Skill], error) {
	var page web.Page[core.Skill]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/skills", query: p.query()}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetSkill returns a version of the skill with this id (or name); 0 is
// the latest.
func (c *Client) GetSkill(ctx context.Context, id string, version int) (*core.Skill, error) {
	var s core.Skill
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/skills/%s", id), query: versionQuery(version)}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SkillFile returns the content of one file of a skill version (0: the
// latest); path is relative to the skill's folder.
func (c *Client) SkillFile(ctx context.Context, id string, version int, path string) ([]byte, error) {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	var b []byte
	rq := request{method: http.MethodGet, path: pathf("/v1/skills/%s/files/", id) + strings.Join(segs, "/"), query: versionQuery(version),
		header: http.Header{"Accept": {"*/*"}}}
	if err := c.do(ctx, rq, &b); err != nil {
		return nil, err
	}
	return b, nil
}

// DeleteSkill deletes every version of the skill; the server refuses
// (409) while an agent or a session pins it.
func (c *Client) DeleteSkill(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/skills/%s", id)}, nil)
}

func versionQuery(version int) url.Values {
	if version <= 0 {
		return nil
	}
	return url.Values{"version": {strconv.Itoa(version)}}
}
