// The part of Vite's client (/@vite/client, served by `appsdk dev`'s Vite) that widget-dev.js uses.
export function createHotContext(ownerPath: string): {
  on(event: string, listener: (payload: any) => void): void;
};
