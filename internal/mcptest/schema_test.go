package mcptest

import (
	"encoding/json"
	"testing"
)

// The methods a client may send are read from the schema's unions: each
// maps to the definition that describes it.
func TestLoadSchemaKnowsTheClientMethods(t *testing.T) {
	s, err := LoadSchema("2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	for method, def := range map[string]string{"tools/call": "CallToolRequest", "initialize": "InitializeRequest"} {
		if got := s.requests[method]; got != def {
			t.Errorf("request %s: definition %q, want %q", method, got, def)
		}
	}
	if got := s.notifs["notifications/initialized"]; got != "InitializedNotification" {
		t.Errorf("notifications/initialized: definition %q", got)
	}
}

// A union of one is the definition itself.
func TestMethodsOfAUnionOfOne(t *testing.T) {
	defs := map[string]json.RawMessage{"Only": json.RawMessage(`{"properties": {"method": {"const": "ping"}}}`)}
	if got := methodsOf(defs, "Only"); len(got) != 1 || got["ping"] != "Only" {
		t.Errorf("methodsOf = %v", got)
	}
}
