// Package skillspane is the Skills pane: the skills a server serves under
// the io.modelcontextprotocol/skills extension (SEP-2640), listed with
// skills/list, and one opened: its SKILL.md read and verified against the
// listing (size, digest, frontmatter), the verification shown, and the
// file shown only when it passed. Nothing of a skill is read before it is
// opened.
//
// It learns of the connection from the messages the root broadcasts and
// lists again on each ConnectedMsg; the verification is package skills'.
package skillspane

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/skills"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// Pane is the skills pane.
type Pane struct {
	c      *common.Common
	client *session.Client
	gen    int
	// declared says the server declared the extension.
	declared bool

	common.Listing[mcp.SkillEntry]
	cursor common.Cursor

	open    int // the skill opened, or -1
	opens   int // numbers the opens, so that a late answer of an older one is dropped
	reading bool
	loaded  *skills.Loaded
	readErr error
	scroll  common.Scroll

	// verdicts are the last verification of each skill's files, by the
	// URI of its SKILL.md; verifying numbers the runs of v, so that the
	// answers of an older run or session are dropped.
	verdicts  map[string]*verdict
	verifying int
	// stopOpen ends the reads of the skill opened (esc, another open);
	// stopVerify those of the last v.
	stopOpen, stopVerify context.CancelFunc

	width, height int
}

// verdict is what was verified of every file of one skill.
type verdict struct {
	files   []*skills.Verification
	skipped int
	running bool
}

// loadedMsg is a skill's SKILL.md, read and checked.
type loadedMsg struct {
	open   int
	gen    int
	uri    string
	loaded *skills.Loaded
	err    error
}

// filesMsg is the verdict of an opened skill's other files.
type filesMsg struct {
	open, gen int
	uri       string
	files     []*skills.Verification
	skip      int
}

// verifiedMsg carries the verdict of one skill's files.
type verifiedMsg struct {
	gen, run int
	uri      string
	files    []*skills.Verification
	skip     int
}

// verifyDoneMsg ends a run of v.
type verifyDoneMsg struct{ run int }

// maxVerify is the most skills v verifies at once.
const maxVerify = 256

// New returns the skills pane.
func New(c *common.Common) *Pane { return &Pane{c: c, open: -1, verdicts: map[string]*verdict{}} }

// Title names the pane, with the number of skills once listed.
func (p *Pane) Title() string {
	if !p.declared || p.Items == nil {
		return "Skills"
	}
	return fmt.Sprintf("Skills (%d)", len(p.Items))
}

// ShowList shows the skills (the pane's tab was chosen).
func (p *Pane) ShowList() {
	if p.open >= 0 {
		p.closeSkill()
	}
}

// InputFocused is always false.
func (p *Pane) InputFocused() bool { return false }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) { p.width, p.height = w, h }

// Update handles the connection messages, the answers of its calls and
// the pane's keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectedMsg:
		p.client, p.gen = msg.Client, msg.Gen
		p.declared = msg.Client != nil && msg.Client.HasExtension(mcp.SkillsExtension)
		p.closeSkill()
		p.Items, p.LoadErr = nil, nil
		p.verdicts = map[string]*verdict{}
		p.verifying++
		if p.stopVerify != nil {
			p.stopVerify()
			p.stopVerify = nil
		}
		if p.declared {
			return p.list()
		}
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.client = nil
	case common.Loaded[mcp.SkillEntry]:
		p.Apply(msg, p.gen)
	case loadedMsg:
		if msg.gen != p.gen {
			return nil
		}
		// SKILL.md's verdict stands whether or not the skill is still open;
		// one that could not be read is a failed read, never left out.
		first := failedRead(msg.uri, msg.err)
		if msg.loaded != nil {
			first = msg.loaded.Verification
		}
		if first != nil {
			v := &verdict{files: []*skills.Verification{first}}
			if msg.open == p.opens {
				v.running = true // its other files come next
			}
			p.verdicts[msg.uri] = v
		}
		if msg.open == p.opens {
			p.reading, p.loaded, p.readErr = false, msg.loaded, msg.err
		}
	case filesMsg:
		if msg.gen == p.gen {
			if v := p.verdicts[msg.uri]; v != nil {
				v.files = append(v.files[:min(1, len(v.files))], msg.files...)
				v.skipped, v.running = msg.skip, false
			}
		}
	case verifiedMsg:
		if msg.gen == p.gen && msg.run == p.verifying {
			p.verdicts[msg.uri] = &verdict{files: msg.files, skipped: msg.skip}
		}
	case verifyDoneMsg:
		if msg.run == p.verifying && p.stopVerify != nil {
			p.stopVerify()
			p.stopVerify = nil
		}
	case tea.KeyPressMsg:
		return p.key(msg)
	}
	return nil
}

func (p *Pane) list() tea.Cmd {
	c := p.client
	return p.Fetch(p.c.Ctx, p.gen, c.AllSkills)
}

func (p *Pane) closeSkill() {
	p.open, p.loaded, p.readErr, p.reading = -1, nil, nil, false
	p.opens++
	if p.stopOpen != nil {
		p.stopOpen()
		p.stopOpen = nil
	}
	for _, v := range p.verdicts {
		if v.running && !p.verifyRunning() {
			v.running = false
		}
	}
}

// verifyRunning reports whether a v run is under way.
func (p *Pane) verifyRunning() bool { return p.stopVerify != nil }

// failedRead is the verdict of a SKILL.md that could not be read.
func failedRead(uri string, err error) *skills.Verification {
	if err == nil {
		return nil
	}
	return &skills.Verification{Skill: uri, File: uri, Checks: []skills.Check{{Name: "read", Status: skills.Failed, Detail: err.Error()}}}
}

func (p *Pane) key(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.open >= 0 {
		switch {
		case key.Matches(msg, k.Back):
			p.closeSkill()
		case key.Matches(msg, k.Reload):
			return p.read(p.open)
		case key.Matches(msg, k.Copy) && p.loaded != nil && p.loaded.Data != nil:
			return common.Copy("the skill's SKILL.md", p.loaded.Data)
		default:
			p.scroll.Move(p.c, msg, len(p.detailLines()), p.height)
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Reload) && p.client != nil && p.declared:
		return p.list()
	case key.Matches(msg, k.VerifyAll) && len(p.Items) > 0:
		return p.verifyAll()
	case key.Matches(msg, k.Open) && p.At(p.cursor.Pos) != nil:
		return p.read(p.cursor.Pos)
	default:
		p.cursor.Move(p.c, msg, len(p.Items), p.listRows())
	}
	return nil
}

// read opens skill i: one resources/read of its SKILL.md, in a Cmd.
func (p *Pane) read(i int) tea.Cmd {
	if p.client == nil {
		return common.Noticef("not connected: the skill cannot be read")
	}
	p.closeSkill()
	p.open, p.reading, p.scroll = i, true, common.Scroll{}
	ctx, stop := context.WithCancel(p.c.Ctx)
	p.stopOpen = stop
	e, c, open, gen := p.Items[i], p.client, p.opens, p.gen
	read := reader(c)
	// SKILL.md first, shown as soon as it is read; then every other file
	// of its manifest, one at a time, until the skill is closed.
	return tea.Sequence(
		func() tea.Msg {
			l, err := skills.Load(ctx, read, e, e.URI)
			return loadedMsg{open: open, gen: gen, uri: e.URI, loaded: l, err: err}
		},
		func() tea.Msg {
			files, skip := skills.VerifyFiles(ctx, read, e, e.URI)
			if ctx.Err() != nil {
				return nil
			}
			return filesMsg{open: open, gen: gen, uri: e.URI, files: files, skip: skip}
		})
}

// reader reads a skill's files through the session, each read under the
// session's clocks.
func reader(c *session.Client) skills.ReadFunc {
	return func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return c.ReadResource(ctx, uri, nil)
	}
}

// verifyAll reads and verifies every file of every skill listed (at most
// maxVerify skills), one skill after the other and one file at a time.
func (p *Pane) verifyAll() tea.Cmd {
	if p.client == nil {
		return common.Noticef("not connected: the skills cannot be verified")
	}
	p.verifying++
	if p.stopVerify != nil {
		p.stopVerify() // a new run replaces the last
	}
	ctx, stop := context.WithCancel(p.c.Ctx)
	p.stopVerify = stop
	c, gen, run := p.client, p.gen, p.verifying
	var cmds []tea.Cmd
	for i, e := range p.Items {
		if i == maxVerify {
			break
		}
		v := p.verdicts[e.URI]
		if v == nil {
			v = &verdict{}
			p.verdicts[e.URI] = v
		}
		v.running = true
		cmds = append(cmds, func() tea.Msg {
			files, skip := skills.VerifyFiles(ctx, reader(c), e, "")
			if ctx.Err() != nil {
				return nil
			}
			return verifiedMsg{gen: gen, run: run, uri: e.URI, files: files, skip: skip}
		})
	}
	cmds = append(cmds, func() tea.Msg { return verifyDoneMsg{run: run} })
	if len(p.Items) > maxVerify {
		cmds = append(cmds, common.Noticef("verified the first %d skills of %d", maxVerify, len(p.Items)))
	}
	return tea.Sequence(cmds...)
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.open >= 0 {
		reread := k.Reload
		reread.SetHelp("ctrl+l", "read again")
		copyKey := k.Copy
		copyKey.SetHelp("y", "copy SKILL.md")
		return []key.Binding{k.Back, k.Down, k.PageDown, reread, copyKey}
	}
	open := k.Open
	open.SetHelp("enter", "load skill")
	return []key.Binding{k.Up, k.Down, open, k.VerifyAll, k.Reload}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, p.ShortHelp()}
}

// View renders the pane.
func (p *Pane) View() string {
	if p.open >= 0 && p.open < len(p.Items) {
		return strings.Join(p.scroll.Window(p.detailLines(), p.height), "\n")
	}
	return strings.Join(p.listLines(), "\n")
}

func (p *Pane) head() []string {
	st := p.c.Styles
	w := max(20, p.width)
	switch {
	case p.client == nil && p.Items == nil:
		return []string{st.Dim.Render("not connected")}
	case !p.declared:
		return common.Wrap("The server does not declare the skills extension ("+mcp.SkillsExtension+
			" under capabilities.extensions): it serves no skills/list.", w)
	case p.Loading:
		return []string{st.Dim.Render("listing skills…")}
	case p.LoadErr != nil:
		return []string{st.Error.Render("✗ skills/list: ") + common.Line(p.LoadErr.Error())}
	case len(p.Items) == 0:
		return []string{st.Dim.Render("The server lists no skills.")}
	}
	return []string{st.Dim.Render(common.Plural(len(p.Items), "skill") + " · enter loads one, v verifies every file of all (nothing is read before)")}
}

func (p *Pane) listRows() int { return max(1, p.height-len(p.head())-1) }

func (p *Pane) listLines() []string {
	out := p.head()
	if len(p.Items) == 0 {
		return out
	}
	out = append(out, "")
	rows := p.listRows()
	p.cursor.Clamp(len(p.Items), rows)
	nameW := 8
	for _, e := range p.Items {
		nameW = max(nameW, min(32, common.Width(common.Line(skills.DisplayName(e)))))
	}
	for i := p.cursor.Offset; i < len(p.Items) && i < p.cursor.Offset+rows; i++ {
		e := p.Items[i]
		text := common.Pad(common.Truncate(common.Line(skills.DisplayName(e)), nameW), nameW) + "  " +
			common.Pad(files(e), 8) + "  " + p.verdictText(e.URI) + common.Line(skills.Description(e))
		if i == p.cursor.Pos {
			out = append(out, p.c.Styles.Selected.Render(common.Pad("> "+text, max(1, p.width))))
			continue
		}
		out = append(out, common.Truncate("  "+text, max(1, p.width)))
	}
	return out
}

// verdictText is the list's column of what was verified of a skill's
// files, "" before v or enter verified them.
func (p *Pane) verdictText(uri string) string {
	v := p.verdicts[uri]
	switch {
	case v == nil:
		return ""
	case v.running:
		return common.Pad("verifying…", 16) + "  "
	}
	_, text := skills.Summary(v.files, v.skipped)
	return common.Pad(text, 16) + "  "
}

// of is the verification of the file at uri, nil when it was not verified.
func (v *verdict) of(uri string) *skills.Verification {
	if v == nil || v.running {
		return nil
	}
	for _, f := range v.files {
		if f.File == uri {
			return f
		}
	}
	return nil
}

// files says how many files a skill's manifest lists.
func files(e mcp.SkillEntry) string {
	fs, dynamic, err := skills.Manifest(e)
	switch {
	case err != nil:
		return "invalid"
	case dynamic:
		return mcp.DynamicSkillResources
	}
	return common.Plural(len(fs), "file")
}

// detailLines is the opened skill: its entry, what was verified, then its
// SKILL.md when it passed.
func (p *Pane) detailLines() []string {
	st := p.c.Styles
	e := p.Items[p.open]
	w := max(20, p.width)
	out := []string{st.Title.Render(common.Line(skills.DisplayName(e))) + "  " + st.Dim.Render(common.Line(e.URI))}
	out = append(out, common.Wrap(common.Line(skills.Description(e)), w)...)
	out = append(out, p.manifestLines(e, w)...)
	out = append(out, "")
	switch {
	case p.reading:
		return append(out, st.Dim.Render("reading "+common.Line(e.URI)+"…"))
	case p.loaded == nil && p.readErr != nil:
		return append(out, st.Error.Render("✗ resources/read: ")+common.Line(p.readErr.Error()))
	case p.loaded == nil:
		return out
	}
	return append(out, p.loadedLines(w)...)
}

// manifestLines are the files the skill's entry lists, each marked with
// its verification, and the summary of it.
func (p *Pane) manifestLines(e mcp.SkillEntry, w int) []string {
	st := p.c.Styles
	fs, dynamic, err := skills.Manifest(e)
	switch {
	case err != nil:
		return []string{st.Error.Render("manifest: ") + common.Line(err.Error())}
	case dynamic:
		return []string{st.Dim.Render(`files: "dynamic" (generated: no digests to verify against)`)}
	}
	var out []string
	v := p.verdicts[e.URI]
	for _, f := range fs {
		size := "?"
		if f.Size != nil {
			size = common.ByteSize(int(*f.Size))
		}
		mark, fv := st.Dim.Render("· "), v.of(f.URI)
		switch {
		case p.reading || (v != nil && v.running):
			mark = st.Dim.Render("… ")
		case fv == nil:
		case !fv.OK():
			mark = st.Error.Render("✗ ")
		default:
			mark = st.Title.Render("✓ ")
		}
		out = append(out, mark+st.Dim.Render("file ")+common.Truncate(common.Line(f.URI)+"  "+size, w-7))
		// SKILL.md's checks are shown in full below.
		if fv != nil && !fv.OK() && !p.reading && f.URI != e.URI {
			for _, ch := range fv.Checks {
				if ch.Status == skills.Failed {
					for _, l := range common.Wrap(common.Line(ch.Name+": "+ch.Detail), max(10, w-7)) {
						out = append(out, "       "+st.Error.Render(l))
					}
				}
			}
		}
	}
	if v != nil && !v.running && !p.reading {
		_, text := skills.Summary(v.files, v.skipped)
		out = append(out, st.Dim.Render("files verified: ")+text)
	}
	return out
}

// loadedLines are the checks of the SKILL.md read, then its text when it
// passed them.
func (p *Pane) loadedLines(w int) []string {
	st := p.c.Styles
	var out []string
	for _, ch := range p.loaded.Checks {
		mark := st.Title.Render("✓ ")
		switch ch.Status {
		case skills.Failed:
			mark = st.Error.Render("✗ ")
		case skills.Unchecked:
			mark = st.Warning.Render("? ")
		}
		for i, l := range common.Wrap(common.Line(ch.Detail), max(10, w-14)) {
			head := strings.Repeat(" ", 14)
			if i == 0 {
				head = mark + common.Pad(ch.Name, 12)
			}
			out = append(out, head+l)
		}
	}
	out = append(out, "")
	if errors.Is(p.readErr, skills.ErrVerification) {
		return append(out, common.Wrap("Not shown: the file is not what the server listed, so the skill is not loaded. "+
			"The Resources pane, or mcpi read, shows the bytes as sent.", w)...)
	}
	text := string(p.loaded.Data)
	if p.loaded.Text == nil {
		text = fmt.Sprintf("[%s of %s]", common.ByteSize(len(p.loaded.Data)), common.Line(p.loaded.MimeType))
	}
	for _, l := range strings.Split(strings.TrimRight(common.Block(text), "\n"), "\n") {
		out = append(out, common.Wrap(l, w)...)
	}
	return out
}
