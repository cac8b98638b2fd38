package skill

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestParseManifest(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Manifest
		errHas   string
	}{
		{name: "plain", in: "---\nname: deploy\ndescription: Ship a release.\n---\n# Deploy\nSteps.\n",
			want: Manifest{Name: "deploy", Description: "Ship a release.", Body: "# Deploy\nSteps.\n"}},
		{name: "crlf and bom", in: "\ufeff---\r\nname: a-b\r\ndescription: \"quoted\"\r\n---\r\nbody", want: Manifest{Name: "a-b", Description: "quoted", Body: "body"}},
		{name: "folded description and metadata", in: "---\nname: pdf\ndescription: >\n  Fill PDF\n  forms.\nlicense: MIT\nmetadata:\n  author: ops\n---\n",
			want: Manifest{Name: "pdf", Description: "Fill PDF forms.", Metadata: map[string]string{"license": "MIT", "metadata.author": "ops"}}},
		{name: "no front matter", in: "# Deploy\n", errHas: "must start with"},
		{name: "unclosed", in: "---\nname: x\ndescription: y\n", errHas: "no closing"},
		{name: "bad yaml", in: "---\nname: [x\ndescription: y\n---\n", errHas: "not valid YAML"},
		{name: "missing name", in: "---\ndescription: y\n---\n", errHas: `field "name" is required`},
		{name: "name not a string", in: "---\nname: [a]\ndescription: y\n---\n", errHas: `field "name" must be a string`},
		{name: "upper-case name", in: "---\nname: Deploy\ndescription: y\n---\n", errHas: `field "name"`},
		{name: "name too long", in: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: y\n---\n", errHas: `field "name"`},
		{name: "empty description", in: "---\nname: x\ndescription: \"  \"\n---\n", errHas: `field "description" is required`},
		{name: "description too long", in: "---\nname: x\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", errHas: `field "description" is 1025 characters`},
		{name: "closing line with text", in: "---\nname: x\ndescription: y\n---more\n", errHas: "closing line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.in))
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || !errors.Is(err, core.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid containing %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != tc.want.Name || m.Description != tc.want.Description || m.Body != tc.want.Body {
				t.Fatalf("got %+v, want %+v", m, tc.want)
			}
			for k, v := range tc.want.Metadata {
				if m.Metadata[k] != v {
					t.Errorf("metadata[%q] = %q, want %q", k, m.Metadata[k], v)
				}
			}
		})
	}
}

func TestDisclose(t *testing.T) {
	if Disclose(nil) != "" {
		t.Fatal("no skills must disclose nothing")
	}
	got := Disclose([]Entry{{Name: "deploy", Description: "Ship\na release.", Location: "/skills/deploy/SKILL.md"},
		{Name: "x", Description: "y", Location: "/workspace/app/.agents/skills/x/SKILL.md", Source: "repository acme/app"}})
	for _, want := range []string{"- deploy: Ship a release.\n  Files: /skills/deploy/SKILL.md\n", "(from repository acme/app)"} {
		if !strings.Contains(got, want) {
			t.Errorf("disclosure lacks %q:\n%s", want, got)
		}
	}
}
