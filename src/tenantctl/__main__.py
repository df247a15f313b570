from tenantctl.cli import main

main()
