package form

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// nestedArgs is the demo server's nested_args schema.
const nestedArgs = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "title": "Name", "description": "Required, at least one character.", "minLength": 1},
		"count": {"type": "integer", "description": "Between 0 and 100.", "minimum": 0, "maximum": 100, "default": 3},
		"ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
		"enabled": {"type": "boolean", "default": true},
		"color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
		"nickname": {"type": ["string", "null"], "description": "Nullable: send null to clear it.", "default": null},
		"when": {"type": "string", "format": "date-time", "description": "An RFC 3339 timestamp."},
		"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []},
		"address": {
			"type": "object",
			"properties": {
				"street": {"type": "string"},
				"city": {"type": "string"},
				"zip": {"type": "string", "pattern": "^[0-9]{5}$"},
				"geo": {
					"type": "object",
					"properties": {
						"lat": {"type": "number", "minimum": -90, "maximum": 90},
						"lon": {"type": "number", "minimum": -180, "maximum": 180}
					},
					"required": ["lat", "lon"]
				}
			},
			"required": ["city"]
		},
		"items": {
			"type": "array",
			"items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1, "default": 1}}, "required": ["sku"]},
			"maxItems": 10
		}
	},
	"required": ["name", "address"]
}`

func testCommon() *common.Common {
	return &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now}
}

func keyPress(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "ctrl+n":
		return tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl}
	case "ctrl+t":
		return tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(keyPress(string(r)))
	}
}

func focusOn(t *testing.T, m *Model, ptr string) {
	t.Helper()
	// Walk with the keys, wrapping round once, as a user would.
	for range 2 {
		for i := 0; i < len(m.flat); i++ {
			if m.flat[m.focus].pointer() == ptr {
				return
			}
			m.Update(keyPress("tab"))
		}
		for m.focus > m.firstFocusable() {
			m.Update(keyPress("shift+tab"))
		}
	}
	t.Fatalf("no field %s", ptr)
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNestedArgsDefaults(t *testing.T) {
	m := New(testCommon(), json.RawMessage(nestedArgs))
	m.SetSize(80, 20)
	var kinds []string
	for _, f := range m.flat {
		kinds = append(kinds, f.pointer()+"="+[]string{"text", "list", "json", "bool", "enum", "multi", "object", "items", "item"}[f.kind])
	}
	want := "/name=text /count=text /ratio=text /enabled=bool /color=enum /nickname=text /when=text /tags=list /address=object /address/street=text /address/city=text /address/zip=text /address/geo=object /address/geo/lat=text /address/geo/lon=text /items=items"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("fields:\n got %s\nwant %s", got, want)
	}
	v, err := m.Value()
	if err != nil {
		t.Fatal(err)
	}
	// A required object is always there, so its own required fields show.
	if got, want := marshal(t, v), `{"address":{},"color":"green","count":3,"enabled":true,"nickname":null,"ratio":0.5}`; got != want {
		t.Errorf("defaults: got %s, want %s", got, want)
	}
	// Missing required properties are attached to their fields.
	problems := m.Validate()
	if len(problems) == 0 {
		t.Fatal("no problems without name and address")
	}
	if p := m.byPointer("/name").problems; len(p) != 1 || p[0] != "required" {
		t.Errorf("name problems = %q", p)
	}
	if p := m.byPointer("/address/city").problems; len(p) != 1 || p[0] != "required" {
		t.Errorf("address/city problems = %q", p)
	}
	screen := ansi.Strip(m.View())
	for _, s := range []string{"name*", "↳ required", "‹ green ›", "[x] true", "∅ null", "address*", "geo", "integer 0..100"} {
		if !strings.Contains(screen, s) {
			t.Errorf("form view lacks %q:\n%s", s, screen)
		}
	}
}

func TestNestedArgsEditing(t *testing.T) {
	m := New(testCommon(), json.RawMessage(nestedArgs))
	m.SetSize(100, 30)
	typeText(m, "Ada")
	focusOn(t, m, "/count")
	m.Update(keyPress("backspace"))
	typeText(m, "x")
	if f := m.byPointer("/count"); f.convErr == "" {
		t.Error("count=x converts")
	}
	m.Update(keyPress("backspace"))
	typeText(m, "7")
	focusOn(t, m, "/enabled")
	m.Update(keyPress("space"))
	focusOn(t, m, "/color")
	m.Update(keyPress("right"))
	focusOn(t, m, "/nickname")
	m.Update(keyPress("ctrl+n")) // no longer null
	typeText(m, "Countess")
	focusOn(t, m, "/tags")
	typeText(m, "a, b,c")
	focusOn(t, m, "/address/city")
	typeText(m, "London")
	focusOn(t, m, "/address/zip")
	typeText(m, "12ab")
	focusOn(t, m, "/items")
	m.Update(keyPress("enter")) // add an item
	typeText(m, "x1")
	m.Update(keyPress("tab"))
	m.Update(keyPress("backspace"))
	typeText(m, "2")
	m.Update(keyPress("enter")) // on the item's last field: save it

	if ps := m.Validate(); len(ps) != 1 || !strings.Contains(ps[0], "/address/zip") {
		t.Errorf("problems = %q", ps)
	}
	if p := m.byPointer("/address/zip").problems; len(p) != 1 || !strings.Contains(p[0], "pattern") {
		t.Errorf("zip problems = %q", p)
	}
	focusOn(t, m, "/address/zip")
	for range 4 {
		m.Update(keyPress("backspace"))
	}
	typeText(m, "12345")
	if ps := m.Validate(); ps != nil {
		t.Errorf("problems = %q", ps)
	}
	v, err := m.Value()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"address":{"city":"London","zip":"12345"},"color":"blue","count":7,"enabled":false,"items":[{"qty":2,"sku":"x1"}],"name":"Ada","nickname":"Countess","ratio":0.5,"tags":["a","b","c"]}`
	if got := marshal(t, v); got != want {
		t.Errorf("value:\n got %s\nwant %s", got, want)
	}

	// Raw JSON and back keeps the value.
	m.Update(keyPress("ctrl+t"))
	if !m.Raw() {
		t.Fatal("not raw")
	}
	v2, err := m.Value()
	if err != nil || marshal(t, v2) != want {
		t.Errorf("raw value = %s, %v", marshal(t, v2), err)
	}
	m.Update(keyPress("ctrl+t"))
	v3, err := m.Value()
	if m.Raw() || err != nil || marshal(t, v3) != want {
		t.Errorf("back from raw: raw=%v value = %s, %v", m.Raw(), marshal(t, v3), err)
	}
}

func TestElicitationShapes(t *testing.T) {
	raw := `{"type":"object","properties":{
		"size": {"type": "string", "title": "T-shirt size", "oneOf": [{"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}], "default": "m"},
		"priority": {"type": "string", "enum": ["low", "high"], "enumNames": ["Low", "High"]},
		"toppings": {"type": "array", "items": {"type": "string", "enum": ["cheese", "ham", "olives"]}, "default": ["cheese"]},
		"languages": {"type": "array", "items": {"anyOf": [{"const": "en", "title": "English"}, {"const": "fr", "title": "French"}]}},
		"age": {"type": "integer", "default": 36}
	}}`
	m := New(testCommon(), json.RawMessage(raw))
	m.SetSize(100, 20)
	v, _ := m.Value()
	if got, want := marshal(t, v), `{"age":36,"size":"m","toppings":["cheese"]}`; got != want {
		t.Errorf("defaults = %s, want %s", got, want)
	}
	focusOn(t, m, "/languages")
	m.Update(keyPress("right"))
	m.Update(keyPress("space"))
	focusOn(t, m, "/priority")
	m.Update(keyPress("right"))
	m.Update(keyPress("right"))
	v, _ = m.Value()
	if got, want := marshal(t, v), `{"age":36,"languages":["fr"],"priority":"high","size":"m","toppings":["cheese"]}`; got != want {
		t.Errorf("value = %s, want %s", got, want)
	}
	screen := ansi.Strip(m.View())
	for _, s := range []string{"Medium (m)", "High (high)", "[x] cheese", "[x] French (fr)"} {
		if !strings.Contains(screen, s) {
			t.Errorf("view lacks %q:\n%s", s, screen)
		}
	}
}

func TestBadSchemaFallsBackToRaw(t *testing.T) {
	m := New(testCommon(), json.RawMessage(`{"type": 12}`))
	if !m.Raw() || m.SchemaError() == nil {
		t.Fatal("a broken schema must give the raw editor")
	}
	m.SetSize(60, 10)
	m.editor.SetValue(`{"x": 1}`)
	v, err := m.Value()
	if err != nil || marshal(t, v) != `{"x":1}` {
		t.Errorf("value = %v, %v", v, err)
	}
}

// TestView is the nested_args form at 80x24 after a refused send: every
// problem is on its field.
func TestView(t *testing.T) {
	m := New(testCommon(), json.RawMessage(nestedArgs))
	m.SetSize(80, 22)
	typeText(m, "x")
	focusOn(t, m, "/address/zip")
	typeText(m, "12")
	focusOn(t, m, "/count")
	typeText(m, "0")
	m.Validate()
	golden.RequireEqual(t, ansi.Strip(m.View())+"\n")
}

// Send refuses a value with problems once; the next send goes anyway, and
// any change in between re-arms the refusal.
func TestSendRefusesOnce(t *testing.T) {
	m := New(testCommon(), json.RawMessage(`{"type":"object","properties":{"mail":{"type":"string","format":"email"},"n":{"type":"integer"}},"required":["n"]}`))
	m.SetSize(80, 10)
	typeText(m, "bob")
	focusOn(t, m, "/n")
	typeText(m, "1")
	v, refused, err := m.Send()
	if err != nil || v != nil || len(refused) != 1 || !strings.Contains(refused[0], "/mail: 'bob' is not a valid email: expected an email address, like name@example.com") {
		t.Fatalf("first send: %v %q %v", v, refused, err)
	}
	if p := m.byPointer("/mail").problems; len(p) != 1 || !strings.Contains(p[0], "is not a valid email") {
		t.Errorf("mail problems = %q", p)
	}
	if !strings.Contains(ansi.Strip(m.View()), "↳ 'bob' is not a valid email: expected an email address") {
		t.Errorf("the reason is not on the field:\n%s", ansi.Strip(m.View()))
	}
	// A key in between: refused again.
	typeText(m, "2")
	if _, refused, _ := m.Send(); refused == nil {
		t.Error("a change did not re-arm the refusal")
	}
	// Enter on the last field asks to send: that goes anyway.
	if submit, _ := m.Update(keyPress("enter")); !submit {
		t.Fatal("enter on the last field does not submit")
	}
	v, refused, err = m.Send()
	if err != nil || refused != nil || marshal(t, v) != `{"mail":"bob","n":12}` {
		t.Errorf("second send: %v %q %v", v, refused, err)
	}
	// A valid value goes at once.
	focusOn(t, m, "/mail")
	typeText(m, "@example.com")
	if v, refused, _ := m.Send(); refused != nil || marshal(t, v) != `{"mail":"bob@example.com","n":12}` {
		t.Errorf("valid send: %v %q", v, refused)
	}
	// Raw JSON that is not an object is never sent.
	m.Update(keyPress("ctrl+t"))
	m.editor.SetValue("[1]")
	if _, _, err := m.Send(); err == nil {
		t.Error("an array was sent")
	}
	if _, _, err := m.Send(); err == nil {
		t.Error("an array was sent the second time")
	}
}

func TestRefusal(t *testing.T) {
	got := Refusal([]string{"/mail: bad", "/n: required"}, "ctrl+s", "send").Text()
	if want := "✗ 2 problems: press ctrl+s again to send anyway · /mail: bad (1 more on the form)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A value that does not convert to the field's type is sent as typed when
// the user sends anyway: nothing typed is dropped.
func TestSendAnywaySendsWhatWasTyped(t *testing.T) {
	m := New(testCommon(), json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`))
	m.SetSize(80, 10)
	typeText(m, "2")
	focusOn(t, m, "/b")
	typeText(m, "abc")
	if _, refused, _ := m.Send(); len(refused) != 1 || !strings.Contains(refused[0], "not a number") {
		// One problem, the one the field shows: not also the schema's
		// "missing property" for the value left out.
		t.Fatalf("a number field holding abc: refused %q", refused)
	}
	v, refused, err := m.Send()
	if err != nil || refused != nil || marshal(t, v) != `{"a":2,"b":"abc"}` {
		t.Errorf("send anyway: %v %q %v", v, refused, err)
	}
}

// TestSetValuesPutsTheCursorAtTheEnd sets every text field of a form whose
// defaults are shorter than the values set: whatever path sets a value, the
// cursor is at its end, so what is typed next goes after it.
func TestSetValuesPutsTheCursorAtTheEnd(t *testing.T) {
	raw := `{"type":"object","properties":{
		"n": {"type": "integer", "default": 10},
		"s": {"type": "string", "default": "ab"},
		"l": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
		"j": {"type": "array", "default": [1]},
		"o": {"type": "object", "properties": {"d": {"type": "number", "default": 1}}}
	}}`
	m := New(testCommon(), json.RawMessage(raw))
	m.SetSize(80, 20)
	m.SetValues(map[string]any{"n": 1010, "s": "abcdef", "l": []any{"a", "b", "c"},
		"j": []any{1, 2, 3}, "o": map[string]any{"d": 1234.5}})
	seen := 0
	for _, f := range m.flat {
		if f.kind != kindText && f.kind != kindList && f.kind != kindJSON {
			continue
		}
		seen++
		if got, want := f.input.Position(), len([]rune(f.input.Value())); got != want {
			t.Errorf("%s: cursor at %d of %q, want %d", f.pointer(), got, f.input.Value(), want)
		}
	}
	if seen != 5 {
		t.Errorf("%d text fields, want 5", seen)
	}
	// The focused field takes a key at the end of its value.
	typeText(m, "9")
	if got := m.byPointer("/n").input.Value(); got != "10109" {
		t.Errorf("n = %q after typing 9, want 10109", got)
	}
}
