// Command floorload is the least a load generator can do against a stdio
// MCP server: spawn it, initialize, then call one tool from -c workers over
// the one connection, -n times (a closed loop) or at -rate calls a second
// for -d (each call's latency from its scheduled start, as mcpi bench
// measures it), and print the throughput and the latency's percentiles as
// JSON. Standard library only, every latency kept and sorted: the floor that
// scripts/bench-load.sh measures mcpi bench and the Inspector's --load
// against.
//
// Usage: floorload [-tool NAME] [-c N] [-n N | -rate R -d D] -- COMMAND [ARGS...]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	tool := flag.String("tool", "echo", "the tool to call")
	workers := flag.Int("c", 8, "workers")
	n := flag.Int("n", 10000, "calls, without -rate")
	rate := flag.Float64("rate", 0, "calls a second (with -d)")
	dur := flag.Duration("d", 5*time.Second, "with -rate: how long")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: floorload [-tool NAME] [-c N] [-n N | -rate R -d D] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	if err := run(flag.Args(), *tool, *workers, *n, *rate, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "floorload:", err)
		os.Exit(1)
	}
}

type conn struct {
	mu      sync.Mutex
	w       *bufio.Writer
	pending sync.Map // id -> chan struct{}
	next    atomic.Int64
}

func (c *conn) send(frame string) {
	c.mu.Lock()
	c.w.WriteString(frame)
	c.w.WriteByte('\n')
	c.w.Flush()
	c.mu.Unlock()
}

// call sends a request and waits for its answer.
func (c *conn) call(method, params string) {
	id := c.next.Add(1)
	done := make(chan struct{})
	c.pending.Store(id, done)
	c.send(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"` + method + `","params":` + params + `}`)
	<-done
}

func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if i := bytes.Index(line, []byte(`"id":`)); i >= 0 {
			rest := line[i+5:]
			end := bytes.IndexAny(rest, ",}")
			if id, perr := strconv.ParseInt(string(bytes.TrimSpace(rest[:end])), 10, 64); perr == nil {
				if ch, ok := c.pending.LoadAndDelete(id); ok {
					close(ch.(chan struct{}))
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func run(argv []string, tool string, workers, n int, rate float64, dur time.Duration) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	c := &conn{w: bufio.NewWriterSize(stdin, 64<<10)}
	go c.read(stdout)
	c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floorload","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	params := `{"name":` + strconv.Quote(tool) + `,"arguments":{}}`

	total := n
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
		total = int(rate * dur.Seconds())
	}
	lat := make([]time.Duration, total)
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				begin := time.Now()
				if interval > 0 {
					begin = start.Add(time.Duration(i) * interval)
					if d := time.Until(begin); d > 0 {
						time.Sleep(d)
					}
				}
				c.call("tools/call", params)
				lat[i] = time.Since(begin)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stdin.Close()
	cmd.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		i := int(p*float64(len(lat))+0.5) - 1
		i = max(0, min(i, len(lat)-1))
		return float64(lat[i]) / 1e6
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"calls": total, "elapsedMs": float64(elapsed) / 1e6, "throughput": float64(total) / elapsed.Seconds(),
		"latencyMs": map[string]float64{"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": q(1)},
	})
}
