package demoserver

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletions is the most values the spec lets one completion result carry.
const maxCompletions = 100

// completableItemIDs is how many item ids the {id} variable completes to:
// more than maxCompletions, so that total and hasMore show up.
const completableItemIDs = 500

// namesByLang complete {name} in demo://greeting/{lang}/{name}; which names
// depends on the {lang} already chosen, passed in the request's context.
var namesByLang = map[string][]string{
	"de": {"Anna", "Bernd", "Clara"},
	"en": {"Alice", "Bob", "Carol"},
	"es": {"Ana", "Benito", "Carmen"},
	"fr": {"Amélie", "Baptiste", "Camille"},
	"ja": {"Aiko", "Haruto", "Sakura"},
}

// complete answers completion/complete for the prompt arguments and
// template variables that have known values. Anything else gets no values
// rather than an error, as the spec suggests for unknown arguments.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref, arg := req.Params.Ref, req.Params.Argument
	var candidates []string
	switch ref.Type {
	case "ref/prompt":
		switch {
		case ref.Name == "greet" && arg.Name == "style":
			candidates = greetStyles
		case ref.Name == "code_review" && arg.Name == "language":
			candidates = languages
		}
	case "ref/resource":
		switch {
		case ref.URI == greetingTemplate && arg.Name == "lang":
			candidates = slices.Sorted(maps.Keys(greetings))
		case ref.URI == greetingTemplate && arg.Name == "name":
			var lang string
			if req.Params.Context != nil {
				lang = req.Params.Context.Arguments["lang"]
			}
			candidates = namesFor(lang)
		case ref.URI == itemsTemplate && arg.Name == "id":
			for id := 1; id <= completableItemIDs; id++ {
				candidates = append(candidates, strconv.Itoa(id))
			}
		}
	}

	values := []string{} // the spec requires an array, never null
	prefix := strings.ToLower(arg.Value)
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			values = append(values, c)
		}
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}
	if len(values) > maxCompletions {
		res.Completion.Values = values[:maxCompletions]
		res.Completion.HasMore = true
	}
	return res, nil
}

// namesFor returns the names for lang, or every name when lang is unknown
// or not chosen yet.
func namesFor(lang string) []string {
	if names, ok := namesByLang[lang]; ok {
		return names
	}
	var all []string
	for _, names := range namesByLang {
		all = append(all, names...)
	}
	slices.Sort(all)
	return all
}
