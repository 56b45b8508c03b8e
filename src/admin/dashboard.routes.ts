import { newRouter, type AppRouter } from '../http/context';
import { validationError } from '../shared/errors';
import { LOG_LEVELS } from '../shared/log-tail';
import type { LogLevel } from '../shared/logger';
import { DASHBOARD_SCREENS, type DashboardScreen } from './contract';
import type { DashboardSnapshots } from './dashboard.snapshot';

/** `coinkeep dashboard` polls this once a second: GET /admin/dashboard?screen=&account=&level=. */
export function dashboardAdminRoutes(snapshots: DashboardSnapshots): AppRouter {
  const r = newRouter('/admin');
  r.get('/dashboard', async (ctx) => {
    const { screen = 'overview', account, level = 'info' } = ctx.query;
    if (typeof screen !== 'string' || !DASHBOARD_SCREENS.includes(screen as DashboardScreen))
      throw validationError('screen', `screen must be one of ${DASHBOARD_SCREENS.join(', ')}`);
    if (account !== undefined && (typeof account !== 'string' || account === '')) throw validationError('account', 'account must be one account id');
    if (typeof level !== 'string' || !LOG_LEVELS.includes(level as LogLevel)) throw validationError('level', `level must be one of ${LOG_LEVELS.join(', ')}`);
    ctx.body = await snapshots.read(screen as DashboardScreen, { account, level: level as LogLevel });
  });
  return r;
}
