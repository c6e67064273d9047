package intercept

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpi-dev/mcpi/internal/query"
)

// The bounds of a faults file: it may come from anywhere (a pull
// request), so reading one is bounded before it is parsed, and anchors and
// aliases are refused (a "billion laughs" bomb is an alias).
const (
	MaxFileSize = 1 << 20
	MaxRules    = 1000
	// maxDelay bounds a delay or a hold of a rule.
	maxDelay = 10 * time.Minute
	// maxCopies bounds duplicate and reorder's window.
	maxCopies = 100
)

// Action is what a rule does to a frame it fires on.
type Action string

// The actions of a faults file.
const (
	ActDelay     Action = "delay"
	ActDrop      Action = "drop"
	ActError     Action = "error"
	ActCorrupt   Action = "corrupt"
	ActDuplicate Action = "duplicate"
	ActReorder   Action = "reorder"
	ActSlow      Action = "slow"
	ActClose     Action = "close"
	ActStatus    Action = "status"
	ActCut       Action = "cut"
)

// actions are the action keys, in the order the docs give them.
var actions = []Action{ActDelay, ActDrop, ActError, ActCorrupt, ActDuplicate, ActReorder, ActSlow, ActClose, ActStatus, ActCut}

// Corruptions of corrupt:.
var corruptions = []string{"cut", "json", "utf8", "id"}

// Rule is one rule of a faults file.
type Rule struct {
	Name string
	Line int
	// Match is the rule's query; an empty one matches every frame.
	Match query.Query
	// Probability is the chance that a matching frame is changed (1 when
	// not given); Count the most frames the rule changes (0: no limit).
	Probability float64
	Count       int
	Action      Action

	// Delay: fixed (Min == Max), uniform in [Min, Max], or normal (Mean,
	// StdDev) clamped at 0 and maxDelay.
	Min, Max, Mean, StdDev time.Duration
	// Error: the code and message of the answer.
	Code    int64
	Message string
	// Corrupt: one of corruptions.
	Corrupt string
	// Copies: duplicate's copies in all (2 and more); reorder's window
	// (how many later frames may overtake the frame).
	Copies int
	// Rate: slow's bytes per second.
	Rate int
	// Close: after the Nth matching frame (After), or at the first
	// matching frame at or after At since the proxy started.
	After int
	At    time.Duration
	// Status: the HTTP status and Retry-After (seconds; 429 and 503).
	Status     int
	RetryAfter int
}

// Faults are the rules of a faults file, in its order.
type Faults struct {
	Rules []Rule
}

// ReadFaults reads and parses a faults file.
func ReadFaults(path string) (*Faults, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	fs, err := ParseFaults(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fs, nil
}

// ParseFaults parses a faults file: a mapping whose one key, faults, is a
// list of rules. Unknown keys and keys written with no value are refused
// with their line, as the collections of mcpi test are read.
func ParseFaults(data []byte) (*Faults, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("the faults file is larger than %d bytes", MaxFileSize)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the faults file is empty")
		}
		return nil, err
	}
	if err := noAliases(&doc, 0); err != nil {
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: a faults file is a mapping with one key, faults: a list of rules", root.Line)
	}
	var list *yaml.Node
	if err := eachKey(root, []string{"faults"}, func(k, v *yaml.Node) error {
		if v.Kind != yaml.SequenceNode {
			return fmt.Errorf("line %d: faults: a list of rules", v.Line)
		}
		list = v
		return nil
	}); err != nil {
		return nil, err
	}
	if list == nil {
		return nil, fmt.Errorf("line %d: no faults: give a list of rules", root.Line)
	}
	if len(list.Content) > MaxRules {
		return nil, fmt.Errorf("line %d: %d rules: a faults file has at most %d", list.Line, len(list.Content), MaxRules)
	}
	fs := &Faults{}
	for i, n := range list.Content {
		r, err := parseRule(n, i+1)
		if err != nil {
			return nil, err
		}
		fs.Rules = append(fs.Rules, r)
	}
	return fs, nil
}

// noAliases refuses anchors and aliases (and nesting past 100 levels):
// a faults file is short, and an alias is how a YAML bomb grows.
func noAliases(n *yaml.Node, depth int) error {
	if depth > 100 {
		return fmt.Errorf("line %d: nested more than 100 levels deep", n.Line)
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return fmt.Errorf("line %d: anchors and aliases are not read in a faults file: write each rule out", n.Line)
	}
	for _, c := range n.Content {
		if err := noAliases(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// eachKey calls f for each key of the mapping n, refusing keys not in
// known and keys with no value, with their line.
func eachKey(n *yaml.Node, known []string, f func(k, v *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			return fmt.Errorf("line %d: unknown key %q (want one of %s)", k.Line, k.Value, strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return fmt.Errorf("line %d: %s is given twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" && v.Style == 0 {
			return fmt.Errorf("line %d: %s: has no value: give one, or remove the key", k.Line, k.Value)
		}
		if err := f(k, v); err != nil {
			return err
		}
	}
	return nil
}

var ruleKeys = func() []string {
	keys := []string{"name", "match", "probability", "count"}
	for _, a := range actions {
		keys = append(keys, string(a))
	}
	return keys
}()

func parseRule(n *yaml.Node, i int) (Rule, error) {
	r := Rule{Name: fmt.Sprintf("rule %d", i), Line: n.Line, Probability: 1}
	if n.Kind != yaml.MappingNode {
		return r, fmt.Errorf("line %d: a rule is a mapping: match, an action and its values", n.Line)
	}
	err := eachKey(n, ruleKeys, func(k, v *yaml.Node) error {
		var err error
		switch k.Value {
		case "name":
			r.Name, err = str(v)
		case "match":
			var s string
			if s, err = str(v); err == nil {
				if r.Match, err = query.Parse(s); err != nil {
					err = fmt.Errorf("match: %w", err)
				}
			}
		case "probability":
			r.Probability, err = strconv.ParseFloat(v.Value, 64)
			if err != nil || v.Kind != yaml.ScalarNode || r.Probability < 0 || r.Probability > 1 {
				err = errors.New("probability: a number from 0 to 1")
			}
		case "count":
			r.Count, err = intIn(v, "count", 1, 1<<30)
		default:
			if r.Action != "" {
				return fmt.Errorf("line %d: %s: a rule has one action, and this one has %s already", k.Line, k.Value, r.Action)
			}
			r.Action = Action(k.Value)
			err = r.parseAction(v)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "line ") {
			err = fmt.Errorf("line %d: %w", v.Line, err)
		}
		return err
	})
	if err == nil && r.Action == "" {
		err = fmt.Errorf("line %d: %s has no action: give one of %s", n.Line, r.Name, strings.Join(ruleKeys[4:], ", "))
	}
	return r, err
}

func (r *Rule) parseAction(v *yaml.Node) error {
	var err error
	switch r.Action {
	case ActDelay:
		if v.Kind == yaml.ScalarNode {
			r.Min, err = duration(v, "delay")
			r.Max = r.Min
			return err
		}
		return mapping(v, "delay", []string{"min", "max", "mean", "stddev"}, func(k string, v *yaml.Node) error {
			d, err := duration(v, "delay: "+k)
			switch k {
			case "min":
				r.Min = d
			case "max":
				r.Max = d
			case "mean":
				r.Mean = d
			case "stddev":
				r.StdDev = d
			}
			return err
		}, func() error {
			uniform, normal := r.Max > 0, r.Mean > 0 || r.StdDev > 0
			switch {
			case uniform == normal:
				return errors.New("delay: a duration, {min, max} (uniform) or {mean, stddev} (normal)")
			case uniform && r.Min > r.Max:
				return errors.New("delay: min is more than max")
			}
			return nil
		})
	case ActDrop, ActCut:
		return yes(v, string(r.Action))
	case ActError:
		var code bool
		return mapping(v, "error", []string{"code", "message"}, func(k string, v *yaml.Node) error {
			if k == "code" {
				code = true
				r.Code, err = strconv.ParseInt(v.Value, 10, 64)
				if err != nil || v.Kind != yaml.ScalarNode {
					return errors.New("error: code: an integer (a JSON-RPC error code)")
				}
				return nil
			}
			r.Message, err = str(v)
			return err
		}, func() error {
			if !code || r.Message == "" {
				return errors.New("error: give both code and message")
			}
			return nil
		})
	case ActCorrupt:
		r.Corrupt, err = str(v)
		if err == nil && !slices.Contains(corruptions, r.Corrupt) {
			err = fmt.Errorf("corrupt: one of %s", strings.Join(corruptions, ", "))
		}
		return err
	case ActDuplicate:
		if v.Value == "true" {
			r.Copies = 2
			return nil
		}
		r.Copies, err = intIn(v, "duplicate", 2, maxCopies)
		return err
	case ActReorder:
		r.Copies, err = intIn(v, "reorder", 1, maxCopies)
		return err
	case ActSlow:
		r.Rate, err = intIn(v, "slow (bytes per second)", 1, 1<<30)
		return err
	case ActClose:
		if v.Kind == yaml.ScalarNode {
			return yes(v, "close")
		}
		return mapping(v, "close", []string{"after", "at"}, func(k string, v *yaml.Node) error {
			if k == "after" {
				r.After, err = intIn(v, "close: after", 1, 1<<30)
				return err
			}
			r.At, err = duration(v, "close: at")
			return err
		}, func() error {
			if r.After > 0 && r.At > 0 {
				return errors.New("close: after or at, not both")
			}
			return nil
		})
	case ActStatus:
		if v.Kind == yaml.ScalarNode {
			r.Status, err = status(v)
			return err
		}
		return mapping(v, "status", []string{"code", "retryAfter"}, func(k string, v *yaml.Node) error {
			if k == "code" {
				r.Status, err = status(v)
				return err
			}
			r.RetryAfter, err = intIn(v, "status: retryAfter (seconds)", 0, 86400)
			return err
		}, func() error {
			if r.Status == 0 {
				return errors.New("status: give its code")
			}
			return nil
		})
	}
	return nil
}

// mapping reads an action's mapping of known keys, then checks it whole.
func mapping(v *yaml.Node, what string, known []string, each func(string, *yaml.Node) error, check func() error) error {
	if v.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: a mapping of %s", what, strings.Join(known, ", "))
	}
	err := eachKey(v, known, func(k, v *yaml.Node) error {
		if err := each(k.Value, v); err != nil {
			return fmt.Errorf("line %d: %w", v.Line, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return check()
}

func str(v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("a text, not a %s", kindName(v))
	}
	return v.Value, nil
}

func kindName(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

func yes(v *yaml.Node, what string) error {
	if v.Kind != yaml.ScalarNode || v.Value != "true" {
		return fmt.Errorf("%s: true (or remove the rule)", what)
	}
	return nil
}

func intIn(v *yaml.Node, what string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode || n < lo || n > hi {
		return 0, fmt.Errorf("%s: an integer from %d to %d", what, lo, hi)
	}
	return n, nil
}

func duration(v *yaml.Node, what string) (time.Duration, error) {
	d, err := time.ParseDuration(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode || d < 0 || d > maxDelay {
		return 0, fmt.Errorf("%s: a duration from 0 to %s, like 250ms or 2s", what, maxDelay)
	}
	return d, nil
}

func status(v *yaml.Node) (int, error) {
	n, err := strconv.Atoi(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode || (n != 429 && (n < 500 || n > 599)) {
		return 0, errors.New("status: 429 or a 5xx")
	}
	return n, nil
}
