package attach

import (
	"html"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Image is an image a Markdown text shows: its address and the name to
// call it by.
type Image struct {
	URL, Name string
}

var (
	markdownImage = regexp.MustCompile(`!\[([^\]]*)\]\(\s*<?(https?://[^\s)>]+)>?(?:\s+"[^"]*")?\s*\)`)
	htmlImage     = regexp.MustCompile(`(?i)<img\b[^>]*>`)
	htmlSrc       = regexp.MustCompile(`(?i)\ssrc\s*=\s*["'](https?://[^"']+)["']`)
	htmlAlt       = regexp.MustCompile(`(?i)\salt\s*=\s*["']([^"']*)["']`)
)

// MarkdownImages are the images of a Markdown text (GitHub's and Linear's
// comments), as ![alt](url) or <img src="url" alt="alt">, each address
// once, in order. A link to a file is not an image: it is left as text.
func MarkdownImages(text string) []Image {
	type hit struct {
		at       int
		url, alt string
	}
	var hits []hit
	for _, m := range markdownImage.FindAllStringSubmatchIndex(text, -1) {
		hits = append(hits, hit{m[0], text[m[4]:m[5]], text[m[2]:m[3]]})
	}
	for _, m := range htmlImage.FindAllStringIndex(text, -1) {
		tag := text[m[0]:m[1]]
		src := htmlSrc.FindStringSubmatch(tag)
		if src == nil {
			continue
		}
		alt := ""
		if a := htmlAlt.FindStringSubmatch(tag); a != nil {
			alt = a[1]
		}
		hits = append(hits, hit{m[0], html.UnescapeString(src[1]), html.UnescapeString(alt)})
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
	seen := map[string]bool{}
	var out []Image
	for _, h := range hits {
		if seen[h.url] {
			continue
		}
		seen[h.url] = true
		out = append(out, Image{URL: h.url, Name: imageName(h.url, h.alt)})
	}
	return out
}

// RecordImages records the images of a Markdown text (MarkdownImages) as
// Record does files.
func (f *Fetcher) RecordImages(source core.AttachmentSource, text string) []core.Attachment {
	images := MarkdownImages(text)
	if len(images) == 0 {
		return nil
	}
	remotes := make([]Remote, 0, len(images))
	for _, im := range images {
		remotes = append(remotes, Remote{URL: im.URL, Name: im.Name})
	}
	return f.Record(source, remotes)
}

// imageName is the alt text when it names a file (GitHub writes the
// uploaded file's name there), else the address's last segment.
func imageName(raw, alt string) string {
	alt = strings.TrimSpace(alt)
	if alt != "" && strings.Contains(alt, ".") && !strings.ContainsAny(alt, "/\\") {
		return alt
	}
	if u, err := url.Parse(raw); err == nil {
		if base := path.Base(u.Path); base != "." && base != "/" {
			return base
		}
	}
	return "image"
}
