package cli

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/skills"
)

// Skills (the io.modelcontextprotocol/skills extension, SEP-2640): `mcpi
// skills` lists them with skills/list and reads nothing else; `mcpi skill`
// loads one: it reads the skill's SKILL.md, and the files named after it,
// one resources/read each, and checks each against the listing (size,
// digest, and for SKILL.md the frontmatter) before anything of it is shown.

// SkillsOptions are the input of `mcpi skills`.
type SkillsOptions struct {
	command.ConnOptions
}

// NewCmdSkills returns `mcpi skills TARGET`.
func NewCmdSkills(f *command.Factory, runF func(context.Context, *SkillsOptions) error) *cobra.Command {
	opts := &SkillsOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:     "skills TARGET",
		Short:   "List the server's skills (skills/list, every page; no file is read)",
		Example: "  mcpi skills -- ./skills-server\n  mcpi skills --json -- ./skills-server",
		Args:    command.TargetArgs(&opts.Target, command.None),
		RunE:    command.RunE(opts, runF, skillsRun),
	}, &opts.ConnOptions)
}

func skillsRun(ctx context.Context, opts *SkillsOptions) error {
	return opts.With(ctx, func(c *session.Client) error {
		list, err := c.AllSkills(ctx)
		return printListing(&opts.ConnOptions, list, err, []string{"NAME", "FILES", "URI", "DESCRIPTION"}, func(e mcp.SkillEntry) []string {
			return []string{skills.DisplayName(e), manifestSummary(e), e.URI, skills.Description(e)}
		})
	})
}

// manifestSummary is the FILES column: how many files the manifest lists,
// "dynamic", or what is wrong with it.
func manifestSummary(e mcp.SkillEntry) string {
	files, dynamic, err := skills.Manifest(e)
	switch {
	case err != nil:
		return "invalid"
	case dynamic:
		return mcp.DynamicSkillResources
	}
	return strconv.Itoa(len(files))
}

// skillReport is what `mcpi skill --json` prints.
type skillReport struct {
	Skill    mcp.SkillEntry `json:"skill"`
	Verified bool           `json:"verified"`
	Files    []skillFile    `json:"files"`
}

type skillFile struct {
	*skills.Verification
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     []byte  `json:"blob,omitempty"`
}

// SkillOptions are the input of `mcpi skill`.
type SkillOptions struct {
	command.ConnOptions
	// Name is the skill's name or URI; Files the files to read after its
	// SKILL.md.
	Name  string
	Files []string
}

// NewCmdSkill returns `mcpi skill NAME [FILE ...] TARGET`.
func NewCmdSkill(f *command.Factory, runF func(context.Context, *SkillOptions) error) *cobra.Command {
	opts := &SkillOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:   "skill NAME [FILE ...] TARGET",
		Short: "Load a skill: read its SKILL.md (and FILEs), verified against the listing",
		Example: `  mcpi skill pdf-processing -- ./skills-server
  mcpi skill pdf-processing references/FORMS.md --session work
  mcpi skill skill://pdf-processing/SKILL.md --json -- ./skills-server`,
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if len(rest) == 0 {
				return command.FlagErrorf("missing the skill's name or URI")
			}
			opts.Name, opts.Files = rest[0], rest[1:]
			return nil
		}),
		RunE: command.RunE(opts, runF, skillRun),
	}, &opts.ConnOptions)
}

func skillRun(ctx context.Context, opts *SkillOptions) error {
	return opts.With(ctx, func(c *session.Client) error {
		e, err := findSkill(ctx, c, opts.Name)
		if err != nil {
			return err
		}
		return loadSkill(ctx, &opts.ConnOptions, c, *e, opts.Files)
	})
}

// findSkill finds the skill word names in skills/list (by URI, frontmatter
// name or the name its URI gives); a URI that no page lists is asked for
// with skills/get.
func findSkill(ctx context.Context, c *session.Client, word string) (*mcp.SkillEntry, error) {
	list, err := c.AllSkills(ctx)
	if err != nil {
		return nil, err
	}
	var found []mcp.SkillEntry
	for _, e := range list {
		if skills.Matches(e, word) {
			found = append(found, e)
		}
	}
	switch {
	case len(found) == 1:
		return &found[0], nil
	case len(found) > 1:
		uris := make([]string, len(found))
		for i, e := range found {
			uris[i] = e.URI
		}
		return nil, command.FlagErrorf("%d skills are named %s: give the URI of one (%s)", len(found), word, strings.Join(uris, ", "))
	case strings.Contains(word, "://"):
		return c.GetSkill(ctx, word)
	}
	return nil, protocolError("skills/list", fmt.Sprintf("no skill named %s (mcpi skills lists them)", word))
}

// loadSkill reads the skill's SKILL.md, then each file of refs, verifying
// each before the next is read, and prints them; the first that fails
// verification ends the command with exit 7 and nothing of it shown.
func loadSkill(ctx context.Context, o *command.ConnOptions, c *session.Client, e mcp.SkillEntry, refs []string) error {
	read := func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return c.ReadResource(ctx, uri, nil)
	}
	uris := []string{e.URI}
	for _, r := range refs {
		if u := skills.FileURI(e.URI, r); u != e.URI {
			uris = append(uris, u)
		}
	}
	report := skillReport{Skill: e, Files: []skillFile{}}
	var loaded []*skills.Loaded
	var failure error
	for _, uri := range uris {
		l, err := skills.Load(ctx, read, e, uri)
		if l == nil {
			return err
		}
		f := skillFile{Verification: l.Verification, MimeType: l.MimeType, Text: l.Text}
		if l.Text == nil {
			f.Blob = l.Data
		}
		report.Files = append(report.Files, f)
		mcptext.SayChecks(o.IO.ErrOut, l.Verification)
		if err != nil {
			failure = err
			break
		}
		loaded = append(loaded, l)
	}
	report.Verified = failure == nil
	if o.JSON {
		if err := iostreams.WriteJSON(o.IO, report); err != nil {
			return err
		}
		return failure
	}
	if failure != nil {
		return failure
	}
	// Without FILEs the skill is its SKILL.md; with them, SKILL.md was read
	// to load the skill, and the FILEs are what was asked for.
	show := loaded
	if len(loaded) > 1 {
		show = loaded[1:]
	}
	for _, l := range show {
		if len(show) > 1 {
			fmt.Fprintf(o.IO.Out, "==> %s <==\n", command.OneLine(l.File))
		}
		if l.Text == nil && !isText(l.Data) {
			fmt.Fprintf(o.IO.Out, "[binary %s, %s: mcpi read %s --raw writes its bytes]\n", command.OneLine(l.MimeType), iostreams.ByteSize(len(l.Data)), command.OneLine(l.File))
			continue
		}
		text := command.Sanitize(string(l.Data), true)
		fmt.Fprint(o.IO.Out, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(o.IO.Out)
		}
	}
	return nil
}

// isText reports whether data may be shown as text.
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}
