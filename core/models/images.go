package models

import (
	"fmt"
	"path"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
)

// Options are the settings of the model clients that are declared as
// settings (the keys and base URLs are read from the environment).
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_MODEL_IMAGES", Flag: "model-images", Usage: "models given images attached to messages, as a comma-separated list of vendor/model, vendor/* or *; none for no model (default: anthropic/* and openai/*, each unless its *_BASE_URL is set)"},
	}
}

// Images says which models take images as image content.
type Images struct{ patterns []string }

// Accept reports whether model takes images.
func (im Images) Accept(model string) bool {
	for _, p := range im.patterns {
		if ok, _ := path.Match(p, model); ok {
			return true
		}
	}
	return false
}

// LoadImages reads SWITCHBOARD_MODEL_IMAGES. Unset, the models of each
// vendor take images unless its base URL is set: a server that speaks
// the API need not take them (Ollama's text models do not).
func LoadImages(v settings.Values, getenv func(string) string) (Images, error) {
	raw := strings.TrimSpace(v["SWITCHBOARD_MODEL_IMAGES"])
	switch raw {
	case "":
		var im Images
		if getenv("ANTHROPIC_BASE_URL") == "" {
			im.patterns = append(im.patterns, "anthropic/*")
		}
		if getenv("OPENAI_BASE_URL") == "" {
			im.patterns = append(im.patterns, "openai/*")
		}
		return im, nil
	case "none":
		return Images{}, nil
	}
	var im Images
	for _, p := range strings.Split(raw, ",") {
		p = strings.TrimSpace(p)
		if p == "*" {
			im.patterns = append(im.patterns, "*/*")
			continue
		}
		vendor, name, ok := strings.Cut(p, "/")
		if _, _, err := core.SplitModel(vendor + "/x"); err != nil || !ok || name == "" {
			return Images{}, fmt.Errorf("SWITCHBOARD_MODEL_IMAGES=%q: %q: want vendor/model, vendor/* or *, with anthropic or openai", raw, p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return Images{}, fmt.Errorf("SWITCHBOARD_MODEL_IMAGES=%q: %q: %v", raw, p, err)
		}
		im.patterns = append(im.patterns, p)
	}
	return im, nil
}
