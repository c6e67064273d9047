package form

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// editFile and createEntities are server-filesystem's edit_file and
// server-memory's create_entities input schemas, as they list them.
const (
	editFile       = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"},"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Text to search for - must match exactly"},"newText":{"type":"string","description":"Text to replace with"}},"required":["oldText","newText"]}},"dryRun":{"default":false,"description":"Preview changes using git-style diff format","type":"boolean"}},"required":["path","edits"]}`
	createEntities = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"entities":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","description":"The name of the entity"},"entityType":{"type":"string","description":"The type of the entity"},"observations":{"type":"array","items":{"type":"string"},"description":"An array of observation contents associated with the entity"}},"required":["name","entityType","observations"]}}},"required":["entities"]}`
)

// screenOf is the form's view with runs of spaces squashed.
func screenOf(m *Model) string {
	return regexp.MustCompile(` +`).ReplaceAllString(ansi.Strip(m.View()), " ")
}

func TestItemsAddEditDelete(t *testing.T) {
	m := New(testCommon(), json.RawMessage(editFile))
	m.SetSize(80, 20)
	if s := screenOf(m); !strings.Contains(s, "each item: {oldText: string*, newText: string*}") || !strings.Contains(s, "list of objects") {
		t.Fatalf("the shape is not shown:\n%s", s)
	}
	typeText(m, "/tmp/a.txt")
	focusOn(t, m, "/edits")
	// Add: enter opens the item's fields; enter on the last one saves it.
	m.Update(keyPress("enter"))
	if !m.EditingItem() {
		t.Fatal("enter on edits opened no item")
	}
	if s := screenOf(m); !strings.Contains(s, "edits › new item") || !strings.Contains(s, "oldText*") {
		t.Errorf("item form:\n%s", s)
	}
	typeText(m, "foo")
	m.Update(keyPress("tab"))
	typeText(m, "bar")
	m.Update(keyPress("enter"))
	if m.EditingItem() {
		t.Fatal("the item was not saved")
	}
	// A second item, missing newText: refused once, saved the second time.
	focusOn(t, m, "/edits")
	m.Update(keyPress("enter"))
	typeText(m, "x")
	m.Update(keyPress("ctrl+s"))
	if !m.EditingItem() || !strings.Contains(screenOf(m), "press ctrl+s again to save anyway") {
		t.Fatalf("an incomplete item was saved at once:\n%s", screenOf(m))
	}
	m.Update(keyPress("ctrl+s"))
	if m.EditingItem() {
		t.Fatal("save anyway did not save")
	}
	v, _ := m.Value()
	if got, want := marshal(t, v), `{"dryRun":false,"edits":[{"newText":"bar","oldText":"foo"},{"oldText":"x"}],"path":"/tmp/a.txt"}`; got != want {
		t.Errorf("value:\n got %s\nwant %s", got, want)
	}
	s := screenOf(m)
	for _, want := range []string{`#1 {oldText: "foo", newText: "bar"}`, `#2 {oldText: "x"}`, "↳ missing property 'newText'"} {
		if !strings.Contains(s, want) {
			t.Errorf("the list lacks %q:\n%s", want, s)
		}
	}
	// Edit #2: its values come back; esc discards a change, enter saves one.
	focusOn(t, m, "/edits/1")
	m.Update(keyPress("enter"))
	typeText(m, "y")
	m.Update(keyPress("esc"))
	m.Update(keyPress("enter"))
	if s := screenOf(m); !strings.Contains(s, "edits › item #2") || !strings.Contains(s, "oldText* x ") {
		t.Errorf("editing #2:\n%s", s)
	}
	m.Update(keyPress("tab"))
	typeText(m, "z")
	m.Update(keyPress("enter"))
	// Delete #1.
	focusOn(t, m, "/edits/0")
	m.Update(keyPress("d"))
	v, _ = m.Value()
	if got, want := marshal(t, v), `{"dryRun":false,"edits":[{"newText":"z","oldText":"x"}],"path":"/tmp/a.txt"}`; got != want {
		t.Errorf("after edit and delete:\n got %s\nwant %s", got, want)
	}
	if ps := m.Validate(); ps != nil {
		t.Errorf("problems: %q", ps)
	}
	// Raw JSON and back keeps the items.
	m.Update(keyPress("ctrl+t"))
	m.Update(keyPress("ctrl+t"))
	v, _ = m.Value()
	if got := marshal(t, v); !strings.Contains(got, `"edits":[{"newText":"z","oldText":"x"}]`) {
		t.Errorf("after raw JSON: %s", got)
	}
}

// Items with a list of strings: create_entities at 80x24, the list and an
// item's form.
func TestItemsView(t *testing.T) {
	m := New(testCommon(), json.RawMessage(createEntities))
	m.SetSize(80, 22)
	m.Update(keyPress("enter"))
	typeText(m, "Ada")
	m.Update(keyPress("tab"))
	typeText(m, "person")
	m.Update(keyPress("tab"))
	typeText(m, "mathematician, wrote the first program")
	itemForm := ansi.Strip(m.View())
	m.Update(keyPress("enter"))
	m.Update(keyPress("shift+tab"))
	m.Update(keyPress("enter"))
	typeText(m, "Charles")
	m.Update(keyPress("ctrl+s"))
	m.Update(keyPress("ctrl+s"))
	v, _ := m.Value()
	if got, want := marshal(t, v), `{"entities":[{"entityType":"person","name":"Ada","observations":["mathematician","wrote the first program"]},{"name":"Charles"}]}`; got != want {
		t.Errorf("value:\n got %s\nwant %s", got, want)
	}
	m.Validate()
	golden.RequireEqual(t, itemForm+"\n--\n"+ansi.Strip(m.View())+"\n")
}
