package mcp

import "encoding/json"

// SkillsExtension names the skills extension (SEP-2640): a server that
// declares it under capabilities.extensions serves skills/list and
// skills/get, and each skill's files as resources.
const SkillsExtension = "io.modelcontextprotocol/skills"

// SkillFile is the name of a skill's entry file, the last segment of its URI.
const SkillFile = "SKILL.md"

// DynamicSkillResources is the resources value of a skill whose files are
// generated: no manifest, so no digest or size to verify them against.
const DynamicSkillResources = "dynamic"

// SkillEntry is one skill of skills/list (or the skill of skills/get): the
// URI of its SKILL.md, the frontmatter the server says that file has, and
// its manifest. Frontmatter and Resources stay raw: they are compared with
// what the files say, and a server may send anything there.
type SkillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter,omitempty"`
	// Resources is an array of SkillResource, or "dynamic".
	Resources json.RawMessage `json:"resources,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SkillResource is one file of a skill's manifest.
type SkillResource struct {
	URI string `json:"uri"`
	// Digest is "sha256:" and 64 lowercase hex digits of the file's bytes.
	Digest string `json:"digest,omitempty"`
	// Size is the file's length in bytes.
	Size *int64 `json:"size,omitempty"`
}

// ListSkillsResult is one page of skills/list.
type ListSkillsResult struct {
	Skills     []SkillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

// GetSkillParams names a skill in skills/get by the URI of its SKILL.md.
type GetSkillParams struct {
	URI string `json:"uri"`
}

// GetSkillResult answers skills/get.
type GetSkillResult struct {
	Skill SkillEntry `json:"skill"`
}

// DirectoryReadMethod lists a directory resource's direct children
// (SEP-2640). Only a server whose skills extension declares directoryRead
// serves it.
const DirectoryReadMethod = "resources/directory/read"

// DirectoryMimeType marks a resource that is a directory: its children are
// listed with DirectoryReadMethod, not read with resources/read.
const DirectoryMimeType = "inode/directory"

// SkillsSettings is what a server declares under the skills extension.
type SkillsSettings struct {
	// DirectoryRead says the server serves resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// ReadDirectoryParams names a directory resource, and the page wanted.
type ReadDirectoryParams struct {
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// ReadDirectoryResult is one page of a directory's direct children.
type ReadDirectoryResult struct {
	Resources  []Resource      `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
	Cache
}
