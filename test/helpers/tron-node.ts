/** The Tron node stand-in lives in src/dev (the sandbox runs it too); tests import it from here. */
export * from '../../src/dev/tron-node';
