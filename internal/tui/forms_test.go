package tui

import (
	"testing"
)

// A tool's form opens fresh each time (the schema's defaults, the cursor in
// the first field); only Edit brings a call's arguments back.
func TestToolFormOpensFresh(t *testing.T) {
	h := startLoaded(t, 100, 30)
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
	h.press("alt+l", "enter") // the list, then the tool again
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
	h := startLoaded(t, 100, 30)
	h.callTool("elicit", "")
	h.waitText("elicitation/create", "string email")
	h.press("tab")
	h.typeText("bob")
	h.press("ctrl+s")
	h.waitText("press ctrl+s again to accept anyway · /email: 'bob' is not a valid email", "↳ 'bob' is not a valid email: expected an email address, like name@example.com")
	h.typeText("@example.com")
	h.press("ctrl+s")
	h.waitText("✓ done", `"email": "bob@example.com"`)

	h.press("alt+l", "ctrl+u")
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
	h.waitText("1 problem: press ctrl+s again to send anyway · /when: 'tomorrow' is not a valid date-time")
	h.press("ctrl+s")
	h.waitText("nested_args · call #2 · ✓ done", `"when": "tomorrow"`)
}

// An array of objects at 80x24: the item's shape on the field, an item
// added through its own form (ctrl+s and esc belong to that form), and the
// list of items.
func TestItemsForm(t *testing.T) {
	h := startLoaded(t, 80, 24)
	h.typeText("nested_args")
	h.press("enter")
	h.waitText("Call nested_args")
	h.typeText("Ada")
	for range 9 { // name .. address/city
		h.press("tab")
	}
	h.typeText("Paris")
	for range 5 { // zip, geo/lat, geo/lon, items
		h.press("tab")
	}
	h.waitText("each item: {sku: string*, qty: integer}")
	h.press("enter")
	h.waitText("items › new item")
	h.typeText("x1")
	h.press("ctrl+s") // saves the item, does not send the call
	h.waitText(`{sku: "x1", qty: 1}`)
	h.press("enter") // on the item: edit it
	h.waitText("items › item #1", "x1")
	h.press("esc", "shift+tab", "enter") // on the list: add one
	h.waitText("items › new item")
	h.typeText("zz")
	h.press("esc") // discards the item, stays in the form
	h.golden(h.waitText(`{sku: "x1", qty: 1}`, "1 item"))
	h.press("ctrl+s")
	h.waitText("nested_args · call #1 · ✓ done")
	calls := h.final().Tools().Calls()
	if got := calls[0].Args["items"]; len(got.([]any)) != 1 {
		t.Errorf("items sent: %v", got)
	}
}
