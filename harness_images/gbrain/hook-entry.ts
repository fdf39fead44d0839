// bb-gbrain's entry for `gbrain hook <event>`: gbrain's own runHook, entered the way gbrain's CLI
// enters it, in an executable that loads only the hook's modules (docs/GBRAIN.md, "The hook's own
// executable").
//
// gbrain's src/cli.ts imports its whole command surface statically (operations, engines, config,
// MCP client...), so every `gbrain hook user-prompt` evaluates that graph before it dispatches to
// `runHook`, which opens no engine and needs none of it: ~0.09 s of CPU a call, against ~0.01 s
// here.  What cli.ts does for `hook` besides loading modules is done here with gbrain's own
// functions, in cli.ts's order: the SIGCHLD reaper and the cleanup signal handlers, stdout pipe
// delivery, global flags, the guardrails module (fail closed), the update marker's answer for `hook`
// (children skip the startup hooks), the short-lived-process mark, then `runHook` with the
// event's arguments and gbrain's exit path (its verdict, flush and grace).  Built by
// scripts/build-gbrain next to gbrain's compiled CLI (`bun build --compile --bytecode`), from the
// staged checkout's root, as /usr/local/bin/gbrain-hook; BB_GBRAIN_HOOK_ENTRY=cli in the seam's
// environment makes bb-gbrain run gbrain's whole CLI instead.
import { installSigchldHandler } from './src/core/zombie-reap.ts';
import { installSignalHandlers as installCleanupSignalHandlers } from './src/core/process-cleanup.ts';
import {
  currentExitCode,
  flushThenExit,
  installStdoutPipeDelivery,
  setCliExitVerdict,
  shouldForceExitAfterMain,
} from './src/core/cli-force-exit.ts';
import { parseGlobalFlags, setCliOptions } from './src/core/cli-options.ts';

installSigchldHandler();

async function main(): Promise<void> {
  const { cliOpts, rest: args } = parseGlobalFlags(process.argv.slice(2));
  setCliOptions(cliOpts);
  if (process.env.GBRAIN_GUARDRAILS_MODULE) {
    try {
      const { loadGuardrailProvidersFromEnv } = await import('./src/core/guardrails.ts');
      await loadGuardrailProvidersFromEnv();
    } catch (err) {
      console.error(`guardrails: ${(err as Error)?.message ?? String(err)}`);
      process.exit(1);
    }
  }
  if (args[0] !== 'hook') {
    console.error('gbrain-hook: only `gbrain-hook hook <event>`; everything else is gbrain\'s own CLI');
    setCliExitVerdict(2);
    return;
  }
  // gbrain's update marker does only this for `hook` (it is in STARTUP_HOOK_SKIP_COMMANDS).
  if (!process.env.GBRAIN_SKIP_STARTUP_HOOKS && process.env.NODE_ENV !== 'test') {
    process.env.GBRAIN_SKIP_STARTUP_HOOKS = '1';
  }
  const { markShortLivedCliProcess } = await import('./src/core/facts/cli-process-mode.ts');
  markShortLivedCliProcess();
  const { runHook } = await import('./src/commands/hook.ts');
  setCliExitVerdict(await runHook(args.slice(1)));
}

installCleanupSignalHandlers();
if (shouldForceExitAfterMain()) installStdoutPipeDelivery();
main().then(
  () => {
    if (shouldForceExitAfterMain()) flushThenExit(currentExitCode());
  },
  (e) => {
    console.error(e.message || e);
    flushThenExit(1);
  },
);
