package command

import (
	"net/http"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// OpenModel makes the provider a model flag names: a spec
// (PROVIDER:MODEL) or a name of the user's model settings (models.yaml,
// or the file $MCPI_MODELS names), with the settings' key and URL for it;
// url (--model-url, --sampling-model-url) wins over theirs. Every request
// goes through mcpi's one HTTP client over rt (nil: the default
// transport). Every model of every command is made here.
func OpenModel(spec, url string, rt http.RoundTripper) (llm.Provider, error) {
	s, err := llm.LoadSettings(nil)
	if err != nil {
		// The user's file is input, as a flag is: exit 2.
		return nil, &FlagError{Err: err}
	}
	spec, o, err := s.Resolve(spec, llm.Options{HTTPClient: transport.NewHTTPClient(rt, transport.EgressPolicy{}), BaseURL: url})
	if err != nil {
		return nil, err
	}
	return llm.Parse(spec, o)
}

// CheckModel says whether spec names a model: a spec, or a name of the
// settings; its key is not looked at yet.
func CheckModel(spec string) error {
	s, err := llm.LoadSettings(nil)
	if err != nil {
		return err
	}
	_, _, err = s.Resolve(spec, llm.Options{})
	return err
}

// ModelPrices is the price table of the turns: the built-in one with the
// user's settings' prices over it. A settings file that cannot be read
// was already said by OpenModel; here it leaves the built-in table.
func ModelPrices() llm.Prices {
	s, err := llm.LoadSettings(nil)
	if err != nil {
		return llm.DefaultPrices()
	}
	return s.PriceTable()
}
