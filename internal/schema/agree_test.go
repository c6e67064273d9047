package schema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// gen builds a small schema and value from fuzz input, using only the
// keywords both validators implement the same way.
type gen struct {
	b      []byte
	i      int
	draft7 bool
}

func (g *gen) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return int(c)
}

func (g *gen) pick(n int) int { return g.next() % n }

var (
	genKeys     = []string{"a", "b", "c", "ab"}
	genNumbers  = []string{"0", "1", "-1", "2", "1.0", "1.5", "10", "0.1", "0.3", "0.0075", "1e2", "-0.5", "100000000000000000000"}
	genStrings  = []string{"", "a", "ab", "abc", "é", "b1", "2020-01-31", "2020-02-30", "2020-01-31T10:00:00Z", "10:00:00+01:00", "23:59:60Z", "x@y.z", "a..b@y.z", "http://x.y/z", "x/y", "123e4567-e89b-12d3-a456-426614174000", "1.2.3.4", "01.2.3.4", "::1", "a", "1"}
	genPatterns = []string{"^a", "b$", "^[a-c]+$", "\\d", "^$", "é", "^.{2}$"}
	genFormats  = []string{"date-time", "date", "time", "email", "uri", "uuid", "ipv4", "ipv6"}
	genTypes    = []string{"null", "boolean", "object", "array", "number", "integer", "string"}
)

func (g *gen) value(depth int) any {
	k := g.pick(10)
	if depth > 3 && k >= 7 {
		k = 0
	}
	switch k {
	case 0:
		return nil
	case 1:
		return g.pick(2) == 1
	case 2, 3:
		return json.Number(genNumbers[g.pick(len(genNumbers))])
	case 4, 5, 6:
		return genStrings[g.pick(len(genStrings))]
	case 7, 8:
		arr := make([]any, g.pick(4))
		for i := range arr {
			arr[i] = g.value(depth + 1)
		}
		return arr
	default:
		obj := map[string]any{}
		for range g.pick(4) {
			obj[genKeys[g.pick(len(genKeys))]] = g.value(depth + 1)
		}
		return obj
	}
}

func (g *gen) num() json.Number { return json.Number(genNumbers[g.pick(len(genNumbers))]) }

func (g *gen) count() json.Number { return json.Number(strconv.Itoa(g.pick(4))) }

func (g *gen) schemas(depth int) []any {
	out := make([]any, 1+g.pick(3))
	for i := range out {
		out[i] = g.schema(depth + 1)
	}
	return out
}

func (g *gen) schemaMap(depth int, keys []string) map[string]any {
	m := map[string]any{}
	for range 1 + g.pick(3) {
		m[keys[g.pick(len(keys))]] = g.schema(depth + 1)
	}
	return m
}

func (g *gen) schema(depth int) any {
	if g.pick(8) == 0 || depth > 3 {
		return g.pick(4) != 0
	}
	s := map[string]any{}
	for range 1 + g.pick(3) {
		switch g.pick(36) {
		case 0:
			s["type"] = genTypes[g.pick(len(genTypes))]
		case 1:
			s["type"] = []any{genTypes[g.pick(len(genTypes))], genTypes[g.pick(len(genTypes))]}
		case 2:
			s["enum"] = []any{g.value(2), g.value(2)}
		case 3:
			s["const"] = g.value(1)
		case 4:
			m := g.num()
			if f, _ := m.Float64(); f > 0 {
				s["multipleOf"] = m
			}
		case 5:
			s[[]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}[g.pick(4)]] = g.num()
		case 6:
			s[[]string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}[g.pick(6)]] = g.count()
		case 7:
			s["pattern"] = genPatterns[g.pick(len(genPatterns))]
		case 8:
			s["items"] = g.schema(depth + 1)
		case 9:
			if g.draft7 {
				s["items"] = g.schemas(depth)
				s["additionalItems"] = g.schema(depth + 1)
			} else {
				s["prefixItems"] = g.schemas(depth)
			}
		case 10:
			s["contains"] = g.schema(depth + 1)
			if !g.draft7 && g.pick(2) == 0 {
				s[[]string{"minContains", "maxContains"}[g.pick(2)]] = g.count()
			}
		case 11:
			s["uniqueItems"] = g.pick(2) == 0
		case 12, 13:
			s["properties"] = g.schemaMap(depth, genKeys)
		case 14:
			s["patternProperties"] = g.schemaMap(depth, genPatterns)
		case 15:
			s["additionalProperties"] = g.schema(depth + 1)
		case 16:
			s["propertyNames"] = g.schema(depth + 1)
		case 17:
			s["required"] = []any{genKeys[g.pick(len(genKeys))], genKeys[g.pick(len(genKeys))]}
		case 18:
			if g.draft7 {
				s["dependencies"] = map[string]any{genKeys[g.pick(len(genKeys))]: []any{genKeys[g.pick(len(genKeys))]}}
			} else {
				s["dependentRequired"] = map[string]any{genKeys[g.pick(len(genKeys))]: []any{genKeys[g.pick(len(genKeys))]}}
			}
		case 19:
			if g.draft7 {
				s["dependencies"] = g.schemaMap(depth, genKeys)
			} else {
				s["dependentSchemas"] = g.schemaMap(depth, genKeys)
			}
		case 20:
			s["allOf"] = g.schemas(depth)
		case 21:
			s["anyOf"] = g.schemas(depth)
		case 22:
			s["oneOf"] = g.schemas(depth)
		case 23:
			s["not"] = g.schema(depth + 1)
		case 24:
			s["if"] = g.schema(depth + 1)
			s["then"] = g.schema(depth + 1)
		case 25:
			s["if"] = g.schema(depth + 1)
			s["else"] = g.schema(depth + 1)
		case 26:
			if g.draft7 {
				// Before 2019-09 $ref hides its siblings, which santhosh
				// does not do: keep it alone.
				s["allOf"] = []any{map[string]any{"$ref": "#/definitions/d"}}
			} else {
				s["$ref"] = "#/$defs/d"
			}
		case 27:
			// Recursion that moves into the value.
			s[[]string{"items", "additionalProperties"}[g.pick(2)]] = map[string]any{"$ref": "#"}
		case 28:
			if !g.draft7 {
				s["unevaluatedProperties"] = g.schema(depth + 1)
			}
		case 29:
			if !g.draft7 {
				s["unevaluatedItems"] = g.schema(depth + 1)
			}
		case 30:
			s["format"] = genFormats[g.pick(len(genFormats))]
		case 31:
			s["type"] = "integer"
		default:
			s["type"] = genTypes[g.pick(len(genTypes))]
		}
	}
	return s
}

func (g *gen) defs() string {
	if g.draft7 {
		return "definitions"
	}
	return "$defs"
}

// FuzzValidateAgrees checks that this package and santhosh-tekuri/jsonschema
// (the validator mcpi used before) agree on valid or invalid.
func FuzzValidateAgrees(f *testing.F) {
	for _, seed := range []string{"", "\x01\x02\x03", "\x0c\x00\x05\x09\x01", "\x15\x03\x02\x02\x09\x04\x07", "\x1c\x1d\x08\x0a\x0b", "\x1a\x0e\x04\x06"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(agree)
}

func agree(t *testing.T, data []byte) {
	{
		g := &gen{b: data}
		g.draft7 = g.pick(4) == 0
		root, _ := g.schema(0).(map[string]any)
		if root == nil {
			root = map[string]any{}
		}
		root[g.defs()] = map[string]any{"d": g.schema(1)}
		if g.draft7 {
			root["$schema"] = "http://json-schema.org/draft-07/schema#"
		}
		schemaText, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := json.Marshal(g.value(0))
		if err != nil {
			t.Fatal(err)
		}

		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaText))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("mcpi:///schema.json", doc); err != nil {
			t.Fatal(err)
		}
		theirs, theirErr := c.Compile("mcpi:///schema.json")
		ours, ourErr := Compile(schemaText)
		if theirErr != nil || ourErr != nil {
			// We refuse $ref cycles that do not move into the value;
			// santhosh may compile them and fail when validating.
			if theirErr == nil && !strings.Contains(ourErr.Error(), "$ref cycle") {
				t.Fatalf("schema %s: we refuse it (%v), santhosh compiles it", schemaText, ourErr)
			}
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(inst))
		if err != nil {
			t.Fatal(err)
		}
		theirValid := theirs.Validate(v) == nil
		ps := ours.Validate(json.RawMessage(inst))
		if (ps == nil) != theirValid {
			t.Fatalf("schema %s\nvalue %s\nours: valid=%v %v\nsanthosh: valid=%v %v", schemaText, inst, ps == nil, ps, theirValid, theirs.Validate(v))
		}
		// Decoded values give the same verdict as raw JSON.
		pv, err := ParseJSON(string(inst))
		if err != nil {
			t.Fatal(err)
		}
		if (ours.Validate(pv) == nil) != (ps == nil) {
			t.Fatalf("schema %s\nvalue %s: raw and decoded disagree", schemaText, inst)
		}
	}
}
