/**
 * Reads the route templates a bundle carries (data.catalog.routes[].template), in catalog order, each once (a
 * template may have one entry per method). The AuthZEN endpoints name routes by them: a resource that is a
 * template exactly as the catalog writes it, and the routes a resource search walks.
 */
export function catalogTemplates(data: Record<string, unknown>): string[] {
  const catalog = data.catalog;
  const routes = typeof catalog === "object" && catalog !== null && "routes" in catalog ? catalog.routes : undefined;
  if (!Array.isArray(routes)) return [];
  const seen = new Set<string>();
  for (const route of routes as unknown[]) {
    const template = typeof route === "object" && route !== null && "template" in route ? route.template : undefined;
    if (typeof template === "string") seen.add(template);
  }
  return [...seen];
}
