import { accountRouter } from './account.router.js';
import { defineModule } from '../manifest.js';

export const accountModule = defineModule({
  name: 'account',
  routers: { account: accountRouter },
});
