import { describe, expect, it } from 'vitest';
import { escapeHtml, renderTemplate } from './template.rules.js';

const INJECTIONS = [
  "{{constructor.constructor('return process')()}}",
  "{% include '/etc/passwd' %}",
  '${process.env}',
  '<%= 7*7 %>',
  '#{7*7}',
];

describe('renderTemplate', () => {
  it('substitutes {$variable} and nothing else', () => {
    expect(
      renderTemplate(
        'Alert {$alert_label} on {$device.host} ({$severity})',
        {
          alert_label: 'Link down',
          'device.host': 'core-1',
          severity: '2',
        },
        { html: false },
      ),
    ).toBe('Alert Link down on core-1 (2)');
    expect(
      renderTemplate('{$missing}|{$ bad}|{alert}|$alert', { alert: 'x' }, { html: false }),
    ).toBe('|{$ bad}|{alert}|$alert');
  });

  it('renders injection attempts in the template literally', () => {
    for (const text of INJECTIONS) {
      expect(renderTemplate(text, { process: 'P', constructor: 'C' }, { html: false })).toBe(text);
      expect(renderTemplate(`<p>${text}</p>`, {}, { html: true })).toBe(`<p>${text}</p>`);
    }
  });

  it('inserts values (syslog text) as text: no second pass, no evaluation', () => {
    for (const text of [...INJECTIONS, '{$secret}']) {
      expect(
        renderTemplate('msg={$message}', { message: text, secret: 'S3CRET' }, { html: false }),
      ).toBe(`msg=${text}`);
    }
  });

  it('HTML-escapes values in HTML bodies only', () => {
    const vars = { message: `<script>alert("x")</script> & 'q'` };
    expect(renderTemplate('<b>{$message}</b>', vars, { html: true })).toBe(
      '<b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;</b>',
    );
    expect(renderTemplate('{$message}', vars, { html: false })).toBe(vars.message);
    expect(escapeHtml('a&b')).toBe('a&amp;b');
  });

  it('does not read inherited properties as variables', () => {
    expect(renderTemplate('[{$constructor}][{$__proto__}][{$toString}]', {}, { html: false })).toBe(
      '[][][]',
    );
  });
});
