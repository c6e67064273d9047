package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/save"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// step is the call as a step of a collection: its arguments, the answers
// the person gave while it ran, and its result as the expectation.
func (c *Call) step(answered []common.Answered) (collection.Saved, error) {
	if c.Result == nil || len(c.Raw) == 0 {
		return collection.Saved{}, errors.New("the call has no result to expect")
	}
	var v any
	if err := json.Unmarshal(c.Raw, &v); err != nil {
		return collection.Saved{}, err
	}
	s := collection.Saved{Call: c.Tool.Name, Args: c.Args, IsError: c.Result.IsError, Text: collection.Snapshot(collection.KindCall, v)}
	for _, a := range answered {
		if s.Answers == nil {
			s.Answers = &collection.Answers{}
		}
		switch {
		case a.Kind == common.Sampling && a.Reply.Sampling != nil:
			if t := samplingText(a.Reply.Sampling); t != "" {
				s.Answers.Sampling = t
			}
		case a.Kind == common.Elicitation && a.Reply.Elicit != nil:
			s.Answers.Elicit = a.Reply.Elicit.Action
			s.Answers.Fields = nil
			if a.Reply.Elicit.Action == mcp.ElicitAccept && len(a.Reply.Elicit.Content) > 0 {
				s.Answers.Fields = a.Reply.Elicit.Content
			}
		}
	}
	return s, nil
}

// samplingText is the text of a sampling reply (what a step's
// answers.sampling gives back).
func samplingText(r *mcp.CreateMessageResult) string {
	var one struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(r.Content, &one) == nil && one.Type == "text" {
		return one.Text
	}
	return ""
}

// stepSavedMsg says how saving a call as a step went.
type stepSavedMsg struct {
	id   int
	path string
	n    int
	note string
	err  error
}

// saveMu makes saves one at a time: two quick presses of t each append
// their step, neither over the other's.
var saveMu sync.Mutex

// saveStepCmd appends the call, as a step, to the collection file (made
// when there is none), off the UI goroutine.
func saveStepCmd(path string, id int, s collection.Saved, note string) tea.Cmd {
	if path == "" {
		path = collection.DefaultFile
	}
	return func() tea.Msg {
		saveMu.Lock()
		defer saveMu.Unlock()
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		data, err := collection.ReadData(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return stepSavedMsg{id: id, path: path, err: err}
		}
		out, err := collection.Append(data, s)
		if err != nil {
			return stepSavedMsg{id: id, path: path, err: err}
		}
		if err := save.Replace(path, out); err != nil {
			return stepSavedMsg{id: id, path: path, err: err}
		}
		n := 0
		if f, err := collection.Parse(out); err == nil {
			n = len(f.Steps)
		}
		return stepSavedMsg{id: id, path: path, n: n, note: note}
	}
}

func (m stepSavedMsg) notice() string {
	if m.err != nil {
		return fmt.Sprintf("call #%d not saved as a step of %s: %v", m.id, m.path, m.err)
	}
	return fmt.Sprintf("call #%d saved as step %d of %s%s", m.id, m.n, m.path, m.note)
}
