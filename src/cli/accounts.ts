// `adops accounts rename FROM TO`: one account's rows, loads and catalogue moved to a new name, e.g.
// `default` to the name an accounts file gives the same server (otherwise both names count its days).
import type { Command } from 'commander';
import { ACCOUNT_NAME } from '../platform/config/accounts.js';
import { renameAccount, type RenameResult } from '../schema/account-rename.js';
import { SchemaRefusal } from '../schema/versions.js';
import { rethrowAs, SUMMARIES, usageError, withWarehouse, type CliContext } from './context.js';

export function registerAccounts(program: Command, ctx: CliContext): void {
  const accounts = program.command('accounts').description(SUMMARIES.accounts);
  accounts
    .command('rename')
    .description(
      "move one account's rows, loads and catalogue to a new name, in one transaction (e.g. default to the " +
        'name an accounts file gives the same server)',
    )
    .argument(
      '<from>',
      'the account holding the rows (default: the account of a deployment without an accounts file)',
    )
    .argument('<to>', 'its new name')
    .option(
      '--merge',
      'when TO already holds rows: keep them, move the rest of FROM (where both loaded a period of a report or hold ' +
        "a catalogue entry, TO's stays and FROM's is dropped, its load kept as superseded)",
      false,
    )
    .addHelpText(
      'after',
      '\nStop the workers first, and start them again with the accounts file naming TO: a worker still ' +
        'running without it pulls FROM again. Pulls queued for FROM then fail as "unknown account" and write nothing.',
    )
    .action(async (from: string, to: string, flags: { merge: boolean }) => {
      for (const name of [from, to])
        if (!ACCOUNT_NAME.test(name))
          throw usageError(
            `${JSON.stringify(name)} is not an account name; expected ${ACCOUNT_NAME.source} ` +
              '(lower case letter, then up to 40 lower case letters, digits or _)',
          );
      if (from === to) throw usageError(`accounts rename ${from} ${to}: the same name; nothing to do`);
      const config = ctx.config();
      const result = await withWarehouse(ctx, 1, (wh) =>
        renameAccount(wh, from, to, flags).catch(rethrowAs([SchemaRefusal])),
      );
      ctx.stdout.write(`${describeRename(result, config.schema).join('\n')}\n`);
      if (config.accountsFile !== undefined && !config.accounts.some((a) => a.name === to))
        ctx.stderr.write(
          `adops: note: ${to} is not in ADOPS_ACCOUNTS_FILE (${config.accountsFile}): add it, or nothing pulls it\n`,
        );
    });
}

/** What `adops accounts rename` prints of a rename. */
export function describeRename(r: RenameResult, schema: string): string[] {
  const list = (rows: Readonly<Record<string, number>>) =>
    Object.entries(rows)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ');
  return [
    `renamed account ${r.from} to ${r.to} in schema ${schema}; rows moved: ${list(r.moved) || 'none'}`,
    ...(Object.keys(r.dropped).length > 0 || r.superseded > 0
      ? [
          `merged: ${r.superseded} loaded period(s) of ${r.from} that ${r.to} had loaded too are superseded; ` +
            `rows of ${r.from} dropped where ${r.to} held the same: ${list(r.dropped) || 'none'}`,
        ]
      : []),
  ];
}
