package tui

import (
	"testing"
)

// A tool's form opens fresh each time (the schema's defaults, the cursor in
// the first field); only Edit brings a call's arguments back.
func TestToolFormOpensFresh(t *testing.T) {
	h := start(t, 100, 30)
	h.waitText(toolsLoaded)
	h.typeText("echo")
	h.press("enter")
	h.waitText("Call echo")
	h.typeText("31")
	h.press("ctrl+s")
	h.waitText("echo · call #1 · ✓ done")
	h.press("esc") // a new form, not the last one
	h.waitText("Call echo")
	h.typeText("1")
	h.press("ctrl+s")
	h.waitText("echo · call #2 · ✓ done")
	h.press("ctrl+l", "enter") // the list, then the tool again
	h.waitText("Call echo")
	h.typeText("2")
	h.press("ctrl+s")
	h.waitText("echo · call #3 · ✓ done")
	h.press("e") // edit arguments: the call's text, the cursor at its end
	h.waitText("Call echo")
	h.typeText("4")
	h.press("ctrl+s")
	h.waitText("echo · call #4 · ✓ done")

	calls := h.final().Tools().Calls()
	want := []string{"31", "1", "2", "24"}
	if len(calls) != len(want) {
		t.Fatalf("%d calls", len(calls))
	}
	for i, c := range calls {
		if c.Args["text"] != want[i] {
			t.Errorf("call #%d sent %v, want text %q", i+1, c.Args, want[i])
		}
	}
}

// A format the value does not have is refused once with the reason (the
// field and the expected form), in elicitation and tool forms alike; the
// second send goes anyway.
func TestFormatRefusedOnce(t *testing.T) {
	h := start(t, 100, 30)
	h.waitText(toolsLoaded)
	h.typeText("elicit")
	h.press("enter", "ctrl+s")
	h.waitText("elicitation/create", "string email")
	h.press("tab")
	h.typeText("bob")
	h.press("ctrl+s")
	h.waitText("press ctrl+s again to accept anyway · /email: 'bob' is not a valid email", "↳ 'bob' is not a valid email: expected an email address, like name@example.com")
	h.typeText("@example.com")
	h.press("ctrl+s")
	h.waitText("✓ done", `"email": "bob@example.com"`)

	h.press("ctrl+l", "ctrl+u")
	h.typeText("nested_args")
	h.press("enter")
	h.waitText("Call nested_args")
	h.typeText("Ada")
	for range 6 { // name .. when
		h.press("tab")
	}
	h.typeText("tomorrow")
	for range 3 { // tags, address/street, address/city
		h.press("tab")
	}
	h.typeText("Paris")
	h.press("ctrl+s")
	h.waitText("1 problem(s): press ctrl+s again to send anyway · /when: 'tomorrow' is not a valid date-time")
	h.press("ctrl+s")
	h.waitText("nested_args · call #2 · ✓ done", `"when": "tomorrow"`)
}
