package keymap

import (
	"reflect"
	"testing"

	"charm.land/bubbles/v2/key"
)

// Every binding of the default keymap answers to a key and has a help
// line that names it and says what it does.
func TestDefaultBindingsHaveKeysAndHelp(t *testing.T) {
	v := reflect.ValueOf(Default()).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		var bindings []key.Binding
		switch f := v.Field(i).Interface().(type) {
		case key.Binding:
			bindings = []key.Binding{f}
		case []key.Binding:
			bindings = f
		}
		if len(bindings) == 0 {
			t.Errorf("%s: no binding", name)
		}
		for _, b := range bindings {
			if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
				t.Errorf("%s: keys %q, help %q %q", name, b.Keys(), b.Help().Key, b.Help().Desc)
			}
		}
	}
}

func TestBindHelpNamesItsKey(t *testing.T) {
	b := bind("ctrl+c", "quit")
	if got := b.Keys(); len(got) != 1 || got[0] != "ctrl+c" || b.Help().Key != "ctrl+c" || b.Help().Desc != "quit" {
		t.Errorf("bind: keys %q, help %+v", got, b.Help())
	}
	l := labelled("↑", "up", "up", "ctrl+p")
	if got := l.Keys(); len(got) != 2 || got[1] != "ctrl+p" || l.Help().Key != "↑" {
		t.Errorf("labelled: keys %q, help %+v", got, l.Help())
	}
}
