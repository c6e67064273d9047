package demoserver

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	helloURI   = "demo://text/hello"
	configURI  = "demo://json/config"
	logoURI    = "demo://binary/logo.png"
	counterURI = "demo://counter"

	itemsPrefix      = "demo://items/"
	itemsTemplate    = itemsPrefix + "{id}"
	greetingPrefix   = "demo://greeting/"
	greetingTemplate = greetingPrefix + "{lang}/{name}"

	// itemCount static items, plus the other static resources, make more
	// than one page of resources/list.
	itemCount = 12
)

// helloText has multi-byte characters so that byte and character counts
// differ, as they do in real resources.
const helloText = "Hello from the mcpi demo server!\nUnicode survives the trip: café, 日本語, 🎉.\n"

const configJSON = `{
  "name": "mcpi-demo",
  "features": {"tools": true, "resources": true, "prompts": true},
  "limits": {"pageSize": 10, "maxBigOutput": 134217728},
  "tags": ["demo", "inspector", "mcp"],
  "owner": null
}
`

// greetings are the languages demo://greeting/{lang}/{name} knows, which
// are also its completions for {lang}.
var greetings = map[string]string{
	"de": "Hallo",
	"en": "Hello",
	"es": "Hola",
	"fr": "Bonjour",
	"ja": "こんにちは",
}

func (d *demo) addResources(icons []mcp.Icon) {
	text := func(uri, mimeType, body string) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: body}}}, nil
		}
	}

	d.server.AddResource(&mcp.Resource{
		URI:         helloURI,
		Name:        "hello",
		Title:       "Hello, world",
		Description: "A short plain-text greeting.",
		MIMEType:    "text/plain",
		Size:        int64(len(helloText)),
		Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5},
	}, text(helloURI, "text/plain", helloText))

	d.server.AddResource(&mcp.Resource{
		URI:         configURI,
		Name:        "config",
		Title:       "Demo configuration",
		Description: "A JSON document.",
		MIMEType:    "application/json",
		Size:        int64(len(configJSON)),
	}, text(configURI, "application/json", configJSON))

	d.server.AddResource(&mcp.Resource{
		URI:         logoURI,
		Name:        "logo",
		Title:       "Demo logo",
		Description: "A 16x16 PNG, read as a base64 blob.",
		MIMEType:    "image/png",
		Size:        int64(len(d.logo)),
		Icons:       icons,
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: logoURI, MIMEType: "image/png", Blob: d.logo}}}, nil
	})

	d.server.AddResource(&mcp.Resource{
		URI:         counterURI,
		Name:        "counter",
		Title:       "Counter",
		Description: fmt.Sprintf("A number that goes up every %v while someone is subscribed, and whenever bump_counter is called. Subscribe to get notifications/resources/updated.", d.counter.interval),
		MIMEType:    "text/plain",
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: counterURI, MIMEType: "text/plain", Text: strconv.FormatInt(d.counter.get(), 10)},
		}}, nil
	})

	for id := 1; id <= itemCount; id++ {
		uri := itemsPrefix + strconv.Itoa(id)
		d.server.AddResource(&mcp.Resource{
			URI:      uri,
			Name:     "item-" + strconv.Itoa(id),
			Title:    "Item " + strconv.Itoa(id),
			MIMEType: "text/plain",
		}, text(uri, "text/plain", itemText(id)))
	}

	d.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: itemsTemplate,
		Name:        "item",
		Title:       "Item by id",
		Description: fmt.Sprintf("Any positive id; 1 to %d are also listed as resources.", itemCount),
		MIMEType:    "text/plain",
	}, readItem)

	d.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: greetingTemplate,
		Name:        "greeting",
		Title:       "Greeting",
		Description: "A greeting for {name} in {lang} (de, en, es, fr or ja). Both variables complete.",
		MIMEType:    "text/plain",
	}, readGreeting)
}

func itemText(id int) string {
	return fmt.Sprintf("This is item %d.\n", id)
}

func readItem(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, err := strconv.Atoi(strings.TrimPrefix(uri, itemsPrefix))
	if err != nil || id < 1 {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: itemText(id)}}}, nil
}

func readGreeting(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	lang, name, ok := strings.Cut(strings.TrimPrefix(uri, greetingPrefix), "/")
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	hello, ok := greetings[lang]
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if n, err := url.PathUnescape(name); err == nil {
		name = n
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("%s, %s!\n", hello, name)},
	}}, nil
}

// counter is demo://counter's value and the sessions subscribed to it.
//
// It ticks only while some session is subscribed, so an idle server runs no
// goroutine. The SDK drops a session's subscriptions when it disconnects
// without telling the server's handlers, so each tick prunes the sessions
// that are gone, and the ticker stops with the last one.
type counter struct {
	interval time.Duration

	mu          sync.Mutex
	value       int64
	subscribers map[*mcp.ServerSession]bool
	ticking     bool
}

func newCounter(interval time.Duration) *counter {
	return &counter{interval: interval, subscribers: make(map[*mcp.ServerSession]bool)}
}

func (c *counter) get() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.value
}

func (c *counter) increment() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.value++
	return c.value
}

// keepTicking forgets the subscribers not in live, and reports whether any
// remain. When none do, it records that the ticker stops, under the same lock
// that subscribe checks, so that a new subscriber starts a new ticker.
func (c *counter) keepTicking(live iter.Seq[*mcp.ServerSession]) bool {
	alive := make(map[*mcp.ServerSession]bool)
	for s := range live {
		alive[s] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.subscribers {
		if !alive[s] {
			delete(c.subscribers, s)
		}
	}
	if len(c.subscribers) == 0 {
		c.ticking = false
		return false
	}
	return true
}

// subscribe accepts subscriptions to any URI, since the SDK records them
// itself; only demo://counter ever changes.
func (d *demo) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI != counterURI {
		return nil
	}
	c := d.counter
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subscribers[req.Session] = true
	if !c.ticking {
		c.ticking = true
		go d.tick()
	}
	return nil
}

func (d *demo) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	c := d.counter
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subscribers, req.Session)
	return nil
}

func (d *demo) tick() {
	t := time.NewTicker(d.counter.interval)
	defer t.Stop()
	for range t.C {
		if !d.counter.keepTicking(d.server.Sessions()) {
			return
		}
		d.bump(context.Background())
	}
}

// bump advances the counter and tells its subscribers.
func (d *demo) bump(ctx context.Context) int64 {
	v := d.counter.increment()
	// ResourceUpdated logs delivery failures itself and always returns nil.
	_ = d.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: counterURI})
	return v
}
