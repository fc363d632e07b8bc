/** TypeBox shapes of the OS upgrade bootstrap (spec part 1, "Upgrader status" and its endpoints). */
import { Type, type Static } from '@sinclair/typebox';

export const DatabaseCluster = Type.Object({
  version: Type.String(),
  cluster: Type.String(),
  port: Type.String(),
  status: Type.String(),
  raw: Type.String(),
});

export const UpgraderStatus = Type.Object(
  {
    codename: Type.String({ description: "The host's Debian codename (VERSION_CODENAME)" }),
    appliance_version: Type.String(),
    database_clusters: Type.Array(DatabaseCluster, {
      description: 'Always empty: this appliance keeps its data in SQLite, not in server clusters',
    }),
    upgrader_installed: Type.Boolean(),
    upgrader_active: Type.String({
      description:
        "systemd's is-active word for the upgrader unit (inactive, active ...); unavailable when the host has no root helper",
    }),
    upgrader_enabled: Type.String({
      description:
        "systemd's is-enabled word for the upgrader unit (disabled, static ...); unavailable when the host has no root helper",
    }),
    upgrader_package_available: Type.Boolean(),
  },
  { $id: 'UpgraderStatus' },
);
export type UpgraderStatus = Static<typeof UpgraderStatus>;

export const InstallAnswer = Type.Object({
  ok: Type.Literal(true),
  already_installed: Type.Optional(Type.Literal(true)),
});

export const StartAnswer = Type.Object({
  url: Type.String({ description: "The upgrader's interface" }),
  token: Type.String({ description: 'One-time token, returned once and never stored' }),
});

export const StopAnswer = Type.Object({ ok: Type.Literal(true) });
