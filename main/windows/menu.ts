/** The application menu: the platform's standard roles plus the console's own few entries. */
import { Menu, type MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  restartEmbeddedAppliance(): void;
}

export function installApplicationMenu(actions: MenuActions, isMac: boolean): void {
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        {
          label: 'Restart the embedded appliance',
          click: () => actions.restartEmbeddedAppliance(),
        },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
