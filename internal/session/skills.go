package session

import (
	"context"
	"encoding/json"

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

// DirectoryRead reports whether the server declared directoryRead: true
// under the skills extension, which resources/directory/read needs.
func (c *Client) DirectoryRead() bool {
	ir := c.InitializeResult()
	if ir == nil {
		return false
	}
	return directoryRead(ir.Capabilities.Extensions)
}

func directoryRead(ext map[string]json.RawMessage) bool {
	raw, ok := ext[mcp.SkillsExtension]
	if !ok {
		return false
	}
	var s mcp.SkillsSettings
	return json.Unmarshal(raw, &s) == nil && s.DirectoryRead
}

// ReadDirectory returns one page of the direct children of the directory
// resource at uri (resources/directory/read, SEP-2640).
func (c *Client) ReadDirectory(ctx context.Context, uri, cursor string) (*mcp.ReadDirectoryResult, error) {
	var r mcp.ReadDirectoryResult
	return &r, c.Call(ctx, mcp.DirectoryReadMethod, mcp.ReadDirectoryParams{URI: uri, Cursor: cursor}, &r, nil)
}

// AllDirectory returns every direct child of the directory resource at
// uri, following the cursors under the rule of every listing. It does not
// descend: a child directory (mimeType inode/directory) is read by calling
// it again.
func (c *Client) AllDirectory(ctx context.Context, uri string) ([]mcp.Resource, error) {
	return allDirectory[mcp.Resource](ctx, c, uri)
}

// AllDirectoryRaw is AllDirectory with each child as the server sent it.
func (c *Client) AllDirectoryRaw(ctx context.Context, uri string) ([]json.RawMessage, error) {
	return allDirectory[json.RawMessage](ctx, c, uri)
}

func allDirectory[T any](ctx context.Context, c *Client, uri string) ([]T, error) {
	return Paginate(c.Operation(ctx), mcp.DirectoryReadMethod, c.maxPages(), func(ctx context.Context, cur string) ([]T, string, error) {
		var r struct {
			Resources  []T    `json:"resources"`
			NextCursor string `json:"nextCursor,omitempty"`
		}
		err := c.Call(ctx, mcp.DirectoryReadMethod, mcp.ReadDirectoryParams{URI: uri, Cursor: cur}, &r, nil)
		return r.Resources, r.NextCursor, err
	})
}
