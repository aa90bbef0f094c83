"""The widget half of a project with web/ (`appsdk new --template react`): Node, types, builds, Vite in dev."""
