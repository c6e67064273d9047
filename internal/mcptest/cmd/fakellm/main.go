// Command fakellm serves a scripted fake model provider on a loopback port
// (internal/mcptest's FakeLLM), for the TUI's end-to-end script: it prints
// the base URL to give mcpi's --model-url, and serves until it is killed.
//
//	fakellm -format openai|anthropic|responses -script turns.json
//
// The script is a JSON array of mcptest.LLMTurn.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

func main() {
	format := flag.String("format", "openai", "openai, anthropic, responses or gemini (its OpenAI-compatible endpoint)")
	script := flag.String("script", "", "a JSON array of turns")
	flag.Parse()
	f, ok := map[string]mcptest.LLMFormat{"openai": mcptest.LLMOpenAIChat, "anthropic": mcptest.LLMAnthropic, "responses": mcptest.LLMOpenAIResponses, "gemini": mcptest.LLMGemini}[*format]
	if !ok {
		fmt.Fprintln(os.Stderr, "fakellm: -format openai, anthropic or responses")
		os.Exit(2)
	}
	var turns []mcptest.LLMTurn
	b, err := os.ReadFile(*script)
	if err == nil {
		err = json.Unmarshal(b, &turns)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(2)
	}
	fk := mcptest.StartFakeLLM(f, turns...)
	fmt.Println(fk.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	fk.Close()
}
