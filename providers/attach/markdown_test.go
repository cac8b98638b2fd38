package attach

import (
	"slices"
	"testing"
)

func TestMarkdownImages(t *testing.T) {
	text := "Broken on Monday:\n\n![Screenshot 2026-11-02.png](https://github.com/user-attachments/assets/1b2c)\n" +
		`<img width="512" alt="trace.png" src="https://github.com/user-attachments/assets/9f9e?x=1&amp;y=2" />` + "\n" +
		"again ![](https://github.com/user-attachments/assets/1b2c) and ![logo](<https://uploads.linear.app/a/b/logo.svg> \"Logo\")\n" +
		"a [link](https://example.com/file.zip), not an image; ![x](javascript:alert(1)); <img src=\"data:image/png;base64,AAA\">"
	got := MarkdownImages(text)
	want := []Image{
		{URL: "https://github.com/user-attachments/assets/1b2c", Name: "Screenshot 2026-11-02.png"},
		{URL: "https://github.com/user-attachments/assets/9f9e?x=1&y=2", Name: "trace.png"},
		{URL: "https://uploads.linear.app/a/b/logo.svg", Name: "logo.svg"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("images\n got %+v\nwant %+v", got, want)
	}
	if got := MarkdownImages("no images here"); got != nil {
		t.Fatalf("images of plain text: %+v", got)
	}
}
