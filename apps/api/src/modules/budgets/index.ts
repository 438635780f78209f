import { budgetsRouter } from './budgets.router.js';
import { defineModule } from '../manifest.js';

export const budgetsModule = defineModule({
  name: 'budgets',
  routers: { budgets: budgetsRouter },
});
