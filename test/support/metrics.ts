/**
 * Test support: reads one sample from a Prometheus text scrape. Matching the text with `includes("name 1")`
 * is not a check: the `# HELP name 1 when ...` line of the status gauges begins with the same characters.
 */

/** The value of the sample `name` (optionally with exactly these `labels`), or undefined when there is none. */
export function metricValue(text: string, name: string, labels?: Record<string, string>): number | undefined {
  const wanted = labels
    ? `${name}{${Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(",")}}`
    : name;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    if (space > 0 && line.slice(0, space) === wanted) return Number(line.slice(space + 1));
  }
  return undefined;
}
