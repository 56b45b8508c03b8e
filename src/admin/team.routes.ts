import { newRouter, type AppRouter } from '../http/context';
import type { TeamService } from '../team/team.service';
import { memberActor, memberOrOperator } from './actor';

/** Account and member commands of the CLI (operator commands act with no member). */
export function teamAdminRoutes(team: TeamService): AppRouter {
  const r = newRouter('/admin');
  r.get('/accounts', async (ctx) => {
    ctx.body = { items: await team.listAccounts() };
  });
  r.post('/accounts', async (ctx) => {
    ctx.status = 201;
    ctx.body = await team.createAccount(ctx.state.body.name, ctx.state.body.owner);
  });
  r.get('/accounts/:id', async (ctx) => {
    ctx.body = await team.showAccount(ctx.params.id!);
  });
  r.post('/accounts/:id/settings', async (ctx) => {
    const settings = (ctx.state.body.settings ?? {}) as Record<string, unknown>;
    ctx.body = { account: await team.setSettings(ctx.params.id!, memberActor(ctx.state.body), settings) };
  });
  r.post('/accounts/:id/verify', async (ctx) => {
    ctx.body = { account: await team.setVerified(ctx.params.id!, ctx.state.body.verified !== false) };
  });
  r.post('/accounts/:id/freeze', async (ctx) => {
    ctx.body = { account: await team.freeze(ctx.params.id!, memberActor(ctx.state.body)) };
  });
  r.post('/accounts/:id/unfreeze', async (ctx) => {
    ctx.body = { account: await team.unfreeze(ctx.params.id!) };
  });
  r.post('/accounts/:id/fee', async (ctx) => {
    ctx.body = { account: await team.setPlatformFee(ctx.params.id!, ctx.state.body.percent) };
  });
  r.post('/accounts/:id/members', async (ctx) => {
    ctx.status = 201;
    ctx.body = await team.addMember(ctx.params.id!, memberOrOperator(ctx.state.body), ctx.state.body.email, ctx.state.body.role);
  });
  r.post('/accounts/:id/members/remove', async (ctx) => {
    ctx.body = await team.removeMember(ctx.params.id!, memberActor(ctx.state.body), ctx.state.body.email);
  });
  r.post('/accounts/:id/members/role', async (ctx) => {
    ctx.body = await team.setRole(ctx.params.id!, memberActor(ctx.state.body), ctx.state.body.email, ctx.state.body.role);
  });
  r.get('/accounts/:id/security-log', async (ctx) => {
    const limit = Number(ctx.query.limit ?? 100);
    ctx.body = { items: await team.securityLog(ctx.params.id!, Number.isFinite(limit) ? limit : 100) };
  });
  return r;
}
