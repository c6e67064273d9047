package session

import (
	"context"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// ListSkills returns one page of skills/list (the skills extension).
func (c *Client) ListSkills(ctx context.Context, cursor string) (*mcp.ListSkillsResult, error) {
	var r mcp.ListSkillsResult
	return &r, c.Call(ctx, "skills/list", mcp.PaginatedParams{Cursor: cursor}, &r, nil)
}

// AllSkills returns every skill, following the cursors. It reads no skill's
// files: the extension forbids fetching them before a skill is loaded.
func (c *Client) AllSkills(ctx context.Context) ([]mcp.SkillEntry, error) {
	return Paginate(c.Operation(ctx), "skills/list", c.maxPages(), func(ctx context.Context, cur string) ([]mcp.SkillEntry, string, error) {
		r, err := c.ListSkills(ctx, cur)
		return r.Skills, r.NextCursor, err
	})
}

// GetSkill returns the entry of the skill whose SKILL.md is at uri.
func (c *Client) GetSkill(ctx context.Context, uri string) (*mcp.SkillEntry, error) {
	var r mcp.GetSkillResult
	if err := c.Call(ctx, "skills/get", mcp.GetSkillParams{URI: uri}, &r, nil); err != nil {
		return nil, err
	}
	return &r.Skill, nil
}

// HasExtension reports whether the server declared the extension id under
// capabilities.extensions.
func (c *Client) HasExtension(id string) bool {
	ir := c.InitializeResult()
	if ir == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[id]
	return ok
}
