package tui

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestMain lets the test binary serve as the demo server over stdio when
// re-executed with MCPI_TEST_PEER=demo, as `mcpi demo` runs it.
func TestMain(m *testing.M) {
	if f, ok := strings.CutPrefix(os.Getenv(mcptest.PeerEnv), toolsFilePeer); ok {
		runToolsFile(f)
		os.Exit(0)
	}
	switch os.Getenv(mcptest.PeerEnv) {
	case "":
		os.Exit(m.Run())
	case "demo":
		if err := demoserver.RunStdio(context.Background(), demoserver.Options{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "hostile:" + mcptest.HostilePoison, "hostile:" + mcptest.HostileCrash:
		mcptest.RunHostile(strings.TrimPrefix(os.Getenv(mcptest.PeerEnv), "hostile:"))
		os.Exit(0)
	case mcptest.SkillsPrefix + mcptest.SkillsHonest, mcptest.SkillsPrefix + mcptest.SkillsDigest,
		mcptest.SkillsPrefix + mcptest.SkillsFrontmatter, mcptest.SkillsPrefix + mcptest.SkillsPoison,
		mcptest.SkillsPrefix + mcptest.SkillsFormsLie:
		mcptest.RunSkills(strings.TrimPrefix(os.Getenv(mcptest.PeerEnv), mcptest.SkillsPrefix))
		os.Exit(0)
	case mcptest.ModernBrokenPrefix + "handshake/server-info":
		mcptest.RunModernBroken("handshake/server-info")
		os.Exit(0)
	case mcptest.TasksPeer:
		mcptest.RunTasks()
		os.Exit(0)
	case mcptest.ListsPrefix + mcptest.BoundsCyclingNoTools:
		mcptest.RunLists(mcptest.BoundsCyclingNoTools)
		os.Exit(0)
	case mcptest.AppsPrefix + mcptest.AppsGood:
		mcptest.RunApps(mcptest.AppsGood)
		os.Exit(0)
	case "demo-legacy":
		if err := demoserver.RunStdio(context.Background(), demoserver.Options{Era: demoserver.EraLegacy}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(2)
}

// frozen is the clock of the tests: durations on screen are all zero.
var frozen = time.Date(2025, 11, 25, 12, 0, 0, 0, time.UTC)

// dialDemo connects to the demo server, re-executing the test binary.
func dialDemo(ctx context.Context, h Hooks) (*session.Client, error) {
	return dialPeer(ctx, h, "demo")
}

// dialPeer connects to the test binary re-executed as peer.
func dialPeer(ctx context.Context, h Hooks, peer string) (*session.Client, error) {
	return dialPeerWith(ctx, h, peer, nil)
}

// dialPeerWith is dialPeer with session options of the test's own.
func dialPeerWith(ctx context.Context, h Hooks, peer string, edit func(*session.Options)) (*session.Client, error) {
	conn, err := transport.Spawn(transport.StdioOptions{
		Command: os.Args[0], Args: []string{"-test.run=^$"},
		Env: []string{mcptest.PeerEnv + "=" + peer}, Tap: h.Tap,
	})
	if err != nil {
		return nil, err
	}
	opts := session.Options{
		Handler: h.Handler, OnNotification: h.OnNotification, OnWarning: h.OnWarning,
		OnHealth: h.OnHealth, Timeout: 30 * time.Second,
	}
	if edit != nil {
		edit(&opts)
	}
	return session.Connect(ctx, conn, opts)
}

// probe wraps the root model to let a test see each screen as it is
// rendered, block the event loop, and time every Update.
type probe struct {
	inner *Model

	mu      sync.Mutex
	screen  string
	changed chan struct{}

	maxUpdate atomic.Int64 // nanoseconds

	// ticks counts the Info pane's once-a-second redraws; others every
	// other message, so that a test can tell when nothing else happens.
	ticks, others atomic.Int64

	// unsafe is the first frame a pane drew with something in it that the
	// screen sink had to make visible: a pane that forgot to sanitise.
	unsafe string
}

// blockMsg holds the event loop until release is closed.
type blockMsg struct {
	blocked chan struct{}
	release chan struct{}
}

func (p *probe) Init() tea.Cmd { return p.inner.Init() }

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if b, ok := msg.(blockMsg); ok {
		close(b.blocked)
		<-b.release
		return p, nil
	}
	switch fmt.Sprintf("%T", msg) {
	case "info.tickMsg":
		p.ticks.Add(1)
	case "timeline.tickMsg":
		// The timeline's own clock: neither news nor the Info pane's.
	default:
		p.others.Add(1)
	}
	start := time.Now()
	_, cmd := p.inner.Update(msg)
	if d := time.Since(start).Nanoseconds(); d > p.maxUpdate.Load() {
		p.maxUpdate.Store(d)
	}
	return p, cmd
}

func (p *probe) View() tea.View {
	raw := p.inner.View().Content
	v := screen{p.inner}.View()
	p.mu.Lock()
	p.screen = v.Content
	if p.unsafe == "" && v.Content != raw {
		p.unsafe = raw
	}
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
	return v
}

// Screen returns the last screen as plain text.
func (p *probe) Screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ansi.Strip(p.screen)
}

// harness runs the TUI against the demo server at a fixed size.
type harness struct {
	t     *testing.T
	tm    *teatest.TestModel
	p     *probe
	m     *Model
	hooks chan Hooks
}

func start(t *testing.T, w, h int, edit ...func(*Options)) *harness {
	t.Helper()
	hs := &harness{t: t, hooks: make(chan Hooks, 4)}
	opts := Options{
		Dial: func(ctx context.Context, hk Hooks) (*session.Client, error) {
			hs.hooks <- hk
			return dialDemo(ctx, hk)
		},
		Target:  "demo (test)",
		NoColor: true,
		Width:   w, Height: h,
		Now:     func() time.Time { return frozen },
		SaveDir: t.TempDir(),
		OpenURL: func(string) error { return nil },
	}
	for _, e := range edit {
		e(&opts)
	}
	hs.m = New(context.Background(), opts)
	t.Cleanup(hs.m.Close)
	hs.p = &probe{inner: hs.m, changed: make(chan struct{}, 1)}
	hs.tm = teatest.NewTestModel(t, hs.p,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	t.Cleanup(func() {
		_ = hs.tm.Quit()
		hs.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	return hs
}

// startLoaded starts the TUI as start does and waits until the Tools
// pane lists the demo server's tools.
func startLoaded(t *testing.T, w, h int, opts ...func(*Options)) *harness {
	t.Helper()
	hs := start(t, w, h, opts...)
	hs.waitText(toolsLoaded)
	return hs
}

// waitFor waits until the screen satisfies cond (checked at each render).
func (h *harness) waitFor(what string, cond func(screen string) bool) string {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s := h.p.Screen()
		if cond(s) {
			return s
		}
		select {
		case <-h.p.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
	}
}

// waitQuiet waits until a whole second of the Info pane's clock passed
// with no other message: the answers of the start are in, and what is
// drawn next is drawn by the clock.
func (h *harness) waitQuiet() {
	h.t.Helper()
	others, ticks := h.p.others.Load(), h.p.ticks.Load()
	h.waitFor("a second with nothing but the clock", func(string) bool {
		if o := h.p.others.Load(); o != others {
			others, ticks = o, h.p.ticks.Load()
			return false
		}
		return h.p.ticks.Load() >= ticks+2
	})
}

// waitText waits until the screen shows every text.
func (h *harness) waitText(texts ...string) string {
	h.t.Helper()
	return h.waitFor(strings.Join(texts, ", "), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// press sends named keys: "enter", "esc", "tab", "ctrl+s", "alt+4", "space",
// "up", "down", "backspace", or a single character.
func (h *harness) press(keys ...string) {
	for _, k := range keys {
		h.tm.Send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	var mod tea.KeyMod
	for {
		switch {
		case strings.HasPrefix(k, "ctrl+"):
			mod |= tea.ModCtrl
			k = k[5:]
			continue
		case strings.HasPrefix(k, "alt+"):
			mod |= tea.ModAlt
			k = k[4:]
			continue
		case strings.HasPrefix(k, "shift+"):
			mod |= tea.ModShift
			k = k[6:]
			continue
		}
		break
	}
	named := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "space": tea.KeySpace,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"backspace": tea.KeyBackspace, "pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp,
		"home": tea.KeyHome, "end": tea.KeyEnd, "f1": tea.KeyF1, "delete": tea.KeyDelete,
	}
	if r, ok := named[k]; ok {
		msg := tea.KeyPressMsg{Code: r, Mod: mod}
		if r == tea.KeySpace && mod == 0 {
			msg.Text = " "
		}
		return msg
	}
	r := []rune(k)[0]
	msg := tea.KeyPressMsg{Code: r, Mod: mod}
	if mod == 0 {
		msg.Text = k
	}
	return msg
}

// typeText types text.
func (h *harness) typeText(s string) { h.tm.Type(s) }

// callTool picks tool in the Tools pane, types text into the first field
// of its form (nothing when text is "") and sends the call.
func (h *harness) callTool(tool, text string) {
	h.typeText(tool)
	h.press("enter")
	h.typeText(text)
	h.press("ctrl+s")
}

// final quits and returns the model.
func (h *harness) final() *Model {
	h.t.Helper()
	_ = h.tm.Quit()
	fm := h.tm.FinalModel(h.t, teatest.WithFinalTimeout(10*time.Second))
	return fm.(*probe).inner
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d\d:\d\d:\d\d\.\d{3,6}`), "hh:mm:ss.mmm"},
	// How short the tab labels are depends on the counts in them, which
	// come when they come: the tab line is TestTabsFitTheWidth's, and the
	// goldens keep only which tab is active.
	{regexp.MustCompile(`^alt\+ .*?(\[[^\]]*\]).*$`), "alt+ … $1 …"},
	{regexp.MustCompile(`spawned pid \d+: \S+( \S+)?`), "spawned pid N: TEST-BINARY"},
	{regexp.MustCompile(`Wire \(\d+\)`), "Wire (N)"},
	// How many rules a check ran grows with the rules: the Check pane's
	// tests are about what it shows of them.
	{regexp.MustCompile(`· \d+ rules ·`), "· N rules ·"},
	{regexp.MustCompile(`\b(Wir|W)\(\d+\)`), "${1}(N)"},
	// The acknowledgement of the session's subscriptions/listen may come
	// before or after the screen a test looks at: notification counts are
	// checked by the tests that are about them.
	{regexp.MustCompile(`notifications \d+`), "notifications N"},
	{regexp.MustCompile(`\b([0-9] (?:Notifs|Not|N))(?:\(\d+\)| \(\d+\))?`), "${1}(N)"},
	{regexp.MustCompile(`process id +\d+`), "process id N"},
	// Durations are right-aligned in columns: the padding goes too.
	{regexp.MustCompile(` *\b\d+(\.\d+)?(µs|ms|s)\b`), " D"},
}

// golden compares the screen, with times and pids masked and trailing
// spaces trimmed, to testdata/<test name>.golden (-update rewrites it).
func (h *harness) golden(screen string) {
	h.t.Helper()
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		for _, m := range masks {
			l = m.re.ReplaceAllString(l, m.with)
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	golden.RequireEqual(h.t, strings.Join(lines, "\n")+"\n")
}
